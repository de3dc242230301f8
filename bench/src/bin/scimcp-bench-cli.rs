//! The trivial "scientific CLI" the benchmark measures the server's own work per run with:
//! it writes `metrics.json` (and `--files N` more small files) into `--out`, optionally
//! sleeps, and exits 0. It does not read `--data` (nor use `--seed`), so a run's time is the server's work
//! plus one process start.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut out, mut files, mut sleep_s) = (None::<PathBuf>, 0u32, 0f64);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(value)),
            // Read nothing: the dataset and the seed only tell items of a campaign apart.
            "--data" | "--seed" => {}
            "--files" => files = value.parse().unwrap_or(0),
            "--sleep-s" => sleep_s = value.parse().unwrap_or(0.0),
            _ => return ExitCode::from(2),
        }
    }
    let Some(out) = out else {
        return ExitCode::from(2);
    };
    if sleep_s > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(sleep_s));
    }
    let written = fs_err::create_dir_all(&out)
        .and_then(|()| fs_err::write(out.join("metrics.json"), "{\"ok\": true}\n"))
        .and_then(|()| {
            (0..files)
                .try_for_each(|i| fs_err::write(out.join(format!("part-{i:04}.txt")), [b'x'; 1024]))
        });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}
