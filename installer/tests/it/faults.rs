//! Fault injection: `install --skip-runtime` is killed with SIGKILL at random points, 200
//! times. After every kill, each client file must parse and be either its old bytes or its
//! new bytes, never a mix; and `repair` must then converge to exactly the bytes a clean
//! install produces.
//!
//! To make the kills land part-way through, the child runs with the test-only hook
//! `SCIMCP_SETUP_TEST_PAUSE_MS=1`, which sleeps 1 ms at every checkpoint between file
//! operations (see `scimcp_installer::faults`); the kill comes after a random delay spanning
//! the whole run. The random sequence is seeded, so a failure can be replayed.

#![cfg(unix)]
// The figures (where the kills landed, how long installs took) are the evidence this test
// exists for: print them.
#![allow(clippy::print_stderr)]

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{bytes, fake_bundle, ok, seed_all, setup_cmd, unicode_tempdir};
use scimcp_installer::ClientContext;
use scimcp_installer::{Host, Layout, Platform};

const TRIALS: usize = 200;
/// Independent homes killed in parallel: the run is dominated by fsync waits, not CPU.
const WORKERS: usize = 4;

/// xorshift64*: a tiny reproducible generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn killed_installs_leave_old_or_new_files_and_repair_converges() {
    let results: Vec<(usize, usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WORKERS)
            .map(|w| s.spawn(move || worker(w as u64, TRIALS / WORKERS)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let (untouched, mixed, complete) = results
        .iter()
        .fold((0, 0, 0), |a, r| (a.0 + r.0, a.1 + r.1, a.2 + r.2));
    eprintln!(
        "{TRIALS} kills: {untouched} before any client write, {mixed} part-way, \
         {complete} after every client write; repair converged every time"
    );
    assert_eq!(untouched + mixed + complete, TRIALS);
    assert!(
        mixed >= TRIALS / 4,
        "too few kills landed part-way: {mixed}"
    );
}

/// `trials` kill-and-repair rounds in a home of its own; counts where the kills landed.
fn worker(seed: u64, trials: usize) -> (usize, usize, usize) {
    let dir = unicode_tempdir();
    let root = dir.path();
    let home = root.join("home");
    let data = root.join("Données scimcp");
    let project = root.join("Mon projet");
    let empty_path = root.join("empty bin");
    fs_err::create_dir_all(&project).unwrap();
    fs_err::create_dir_all(&empty_path).unwrap();
    let bundle = fake_bundle(root, "scimcp-0.1.0", None)
        .display()
        .to_string();
    let host = Host::fake(Platform::Linux, &home, &[]);
    let layout = Layout::new(&data, Platform::Linux);
    let cx = ClientContext {
        host: &host,
        layout: &layout,
        project: Some(&project),
    };
    let seeded = seed_all(cx);
    let files: Vec<PathBuf> = common::client_files(cx)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let old: Vec<Option<Vec<u8>>> = files.iter().map(|p| bytes(p)).collect();
    let project_arg = project.display().to_string();
    let mut args: Vec<String> = vec!["--project".into(), project_arg];
    for c in scimcp_installer::all_clients() {
        args.push("--client".into());
        args.push(c.id().into());
    }
    args.extend(["install", "--skip-runtime", "--allow-unsigned", "--from"].map(String::from));
    args.push(bundle.clone());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut repair_argv = argv.clone();
    let i = repair_argv.iter().position(|a| *a == "install").unwrap();
    repair_argv[i] = "repair";

    let reset = || {
        for (p, b) in files.iter().zip(&old) {
            match b {
                Some(b) => fs_err::write(p, b).unwrap(),
                None => {
                    let _ = fs_err::remove_file(p);
                }
            }
        }
        let _ = fs_err::remove_dir_all(&data);
    };

    // The reference: what a clean, uninterrupted install writes.
    let start = Instant::now();
    ok(setup_cmd(&home, &data, &empty_path, &argv)
        .env(scimcp_installer::testing::PAUSE_ENV, "1")
        .output()
        .unwrap());
    let full_run = start.elapsed();
    let new: Vec<Option<Vec<u8>>> = files.iter().map(|p| bytes(p)).collect();
    assert!(
        new.iter().zip(&old).all(|(n, o)| n != o),
        "every client file changes"
    );
    assert!(seeded.len() >= 17);

    let mut rng = Rng(0x005C_13C9_2026 + seed * 0x9E37_79B9);
    let window = full_run.as_micros() as u64 + 5_000;
    let (mut untouched, mut mixed, mut complete) = (0, 0, 0);
    for trial in 0..trials {
        reset();
        let delay = Duration::from_micros(rng.next() % window);
        let mut child = setup_cmd(&home, &data, &empty_path, &argv)
            .env(scimcp_installer::testing::PAUSE_ENV, "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let mut n_new = 0;
        for ((p, o), n) in files.iter().zip(&old).zip(&new) {
            let now = bytes(p);
            assert!(
                now == *o || now == *n,
                "trial {trial} (kill after {delay:?}): {} is neither old nor new:\n{}",
                p.display(),
                String::from_utf8_lossy(&now.unwrap_or_default())
            );
            n_new += usize::from(now == *n);
        }
        match n_new {
            0 => untouched += 1,
            n if n == files.len() => complete += 1,
            _ => mixed += 1,
        }
        ok(setup_cmd(&home, &data, &empty_path, &repair_argv)
            .output()
            .unwrap());
        for (p, n) in files.iter().zip(&new) {
            assert_eq!(
                bytes(p),
                *n,
                "trial {trial}: repair did not converge for {}",
                p.display()
            );
            let dir = p.parent().unwrap();
            let stray: Vec<_> = fs_err::read_dir(dir)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp"))
                .collect();
            assert!(
                stray.is_empty(),
                "trial {trial}: temp files left in {}: {stray:?}",
                dir.display()
            );
        }
    }
    eprintln!("worker {seed}: an uninterrupted install took {full_run:?}");
    (untouched, mixed, complete)
}

/// A write killed with its temporary file staged (here: a backup, in `backups/`) leaves a
/// `.tmp`; the next mutating command sweeps it, and says so.
#[test]
fn a_temp_file_left_by_a_killed_write_is_swept_by_the_next_command() {
    let dir = unicode_tempdir();
    let root = dir.path();
    let home = root.join("home");
    let data = root.join("Données scimcp");
    let bin = root.join("empty bin");
    fs_err::create_dir_all(home.join(".cursor")).unwrap();
    fs_err::create_dir_all(&bin).unwrap();
    fs_err::write(home.join(".cursor/mcp.json"), "{}\n").unwrap();
    let bundle = fake_bundle(root, "scimcp-0.1.0", None)
        .display()
        .to_string();
    let argv = [
        "install",
        "--client",
        "cursor",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &bundle,
    ];
    let backups = data.join("backups");
    let temps = || -> Vec<String> {
        fs_err::read_dir(&backups)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".tmp"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut child = setup_cmd(&home, &data, &bin, &argv)
        .env(scimcp_installer::testing::PAUSE_STAGED_ENV, "60000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while temps().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no staged temp appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left = temps();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(
        fs_err::read_to_string(home.join(".cursor/mcp.json")).unwrap(),
        "{}\n",
        "the kill came before the client write"
    );
    let out = ok(setup_cmd(&home, &data, &bin, &argv).output().unwrap());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("temporary file(s) an interrupted scimcp-setup left behind")
            && said.contains(&left[0]),
        "{said}"
    );
    assert!(temps().is_empty(), "{:?}", temps());
    eprintln!("killed with {} staged; the next install swept it", left[0]);
}
