//! A deliberately misbehaving "scientific CLI" for the server's hardening tests: it floods
//! stdout, sleeps with a child in its process group, skips its artifact, writes outside its
//! output directory, or writes too many files, as asked. Never shipped.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let (mut flood, mut sleep_s, mut files, mut exit_code) = (0u64, 0f64, 0u32, 0u8);
    let (mut skip_artifact, mut write_outside, mut spawn_child) = (false, false, false);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(value())),
            "--data" => {
                value();
            }
            "--flood-bytes" => flood = value().parse().unwrap_or(0),
            "--sleep-s" => sleep_s = value().parse().unwrap_or(0.0),
            "--files" => files = value().parse().unwrap_or(0),
            "--exit-code" => exit_code = value().parse().unwrap_or(0),
            "--skip-artifact" => skip_artifact = true,
            "--write-outside" => write_outside = true,
            "--spawn-child" => spawn_child = true,
            "--sleep-only" => {
                std::thread::sleep(Duration::from_secs_f64(value().parse().unwrap_or(0.0)));
                return ExitCode::SUCCESS;
            }
            other => {
                let _ = writeln!(std::io::stderr(), "fixture: unknown argument {other}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(out) = out else {
        let _ = writeln!(std::io::stderr(), "fixture: --out is required");
        return ExitCode::from(2);
    };
    fs_err::create_dir_all(&out).expect("create --out");
    if flood > 0 {
        let line = [b'x'; 1023];
        let mut stdout = std::io::stdout().lock();
        let mut written = 0;
        while written < flood {
            if stdout
                .write_all(&line)
                .and_then(|_| stdout.write_all(b"\n"))
                .is_err()
            {
                break;
            }
            written += 1024;
        }
        let _ = writeln!(stdout, "fixture: flood done");
    }
    let mut worker = None;
    if spawn_child {
        let exe = std::env::current_exe().expect("own path");
        let child = std::process::Command::new(exe)
            .args(["--sleep-only", &sleep_s.to_string()])
            .spawn()
            .expect("spawn child");
        fs_err::write(out.join("worker.pid"), child.id().to_string()).expect("write worker.pid");
        worker = Some(child);
    }
    if sleep_s > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(sleep_s));
    }
    if let Some(mut child) = worker {
        let _ = child.wait();
    }
    if write_outside {
        fs_err::write(out.join("../outside.txt"), "outside the output directory")
            .expect("write outside");
        fs_err::write(out.join("../../escape.txt"), "in the run directory").expect("write escape");
    }
    for i in 0..files {
        fs_err::write(out.join(format!("file_{i:04}.txt")), i.to_string()).expect("write file");
    }
    if !skip_artifact {
        fs_err::write(out.join("result.json"), "{\"ok\": true}\n").expect("write result");
    }
    ExitCode::from(exit_code)
}
