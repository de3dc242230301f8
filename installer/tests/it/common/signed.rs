//! A fake home with a key-pair release policy: signed and unsigned bundle zips made the way
//! `scimcp-release sign --key` signs them, for the signature and release-download tests.
//!
//! The bundles are written here rather than by `scimcp_release::sign`: the installer depends
//! on the verifier only, and a dev-dependency on scimcp-release would put the bundler, the
//! signer and the server back into its dependency tree.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use base64ct::{Base64, Encoding};
use p256::ecdsa::signature::Signer;
use p256::elliptic_curve::Generate;
use p256::pkcs8::EncodePublicKey;
use sha2::{Digest, Sha256};

use super::{bytes, fake_bundle, run_setup, unicode_tempdir};

/// The target this computer's bundles are named for, as the installer computes it.
pub fn target() -> &'static str {
    scimcp_installer::testing::host_target()
}

pub struct Env {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub data: PathBuf,
    pub path: PathBuf,
    /// A key-pair release policy trusting the public half of `key`.
    pub policy: PathBuf,
    key: p256::ecdsa::SigningKey,
}

pub fn env() -> Env {
    let dir = unicode_tempdir();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let path = root.join("empty bin");
    fs_err::create_dir_all(&home).unwrap();
    fs_err::create_dir_all(&path).unwrap();
    let key = p256::ecdsa::SigningKey::generate();
    let keys = root.join("clés");
    fs_err::create_dir_all(&keys).unwrap();
    fs_err::write(
        keys.join("scimcp-release.pub"),
        key.verifying_key()
            .to_public_key_pem(p256::pkcs8::LineEnding::LF)
            .unwrap(),
    )
    .unwrap();
    let policy = keys.join("release.toml");
    fs_err::write(
        &policy,
        format!("tag = \"v{{version}}\"\ntargets = [\"{}\"]\n\n[signer]\npublic_key = \"scimcp-release.pub\"\n", target()),
    )
    .unwrap();
    Env {
        data: root.join("Données scimcp"),
        _dir: dir,
        root,
        home,
        path,
        policy,
        key,
    }
}

impl Env {
    /// Sign like `scimcp-release sign --key`: the bundle JSON for `artifact`.
    pub fn sign(&self, artifact: &[u8]) -> String {
        let spki = self.key.verifying_key().to_public_key_der().unwrap();
        let signature: p256::ecdsa::DerSignature = self.key.sign(artifact);
        let b64 = |bytes: &[u8]| Base64::encode_string(bytes);
        let bundle = serde_json::json!({
            "mediaType": scimcp_verify::BUNDLE_V03_MEDIA_TYPE,
            "verificationMaterial": {
                "publicKey": { "hint": b64(&Sha256::digest(spki.as_bytes())) },
                "tlogEntries": [],
            },
            "messageSignature": {
                "messageDigest": { "algorithm": "SHA2_256", "digest": b64(&Sha256::digest(artifact)) },
                "signature": b64(signature.as_bytes()),
            },
        });
        serde_json::to_string_pretty(&bundle).unwrap() + "\n"
    }

    pub fn run(&self, args: &[&str]) -> std::process::Output {
        run_setup(&self.home, &self.data, &self.path, args)
    }

    /// Like [`Env::run`], with the system temporary directory at `<root>/tmp` (so a test can
    /// prove downloads leave nothing behind) and, on Windows, `SystemRoot` (without it the
    /// child cannot open a socket).
    pub fn run_networked(&self, args: &[&str]) -> std::process::Output {
        let tmp = self.tmp();
        fs_err::create_dir_all(&tmp).unwrap();
        let mut cmd = super::setup_cmd(&self.home, &self.data, &self.path, args);
        cmd.env("TMPDIR", &tmp).env("TEMP", &tmp).env("TMP", &tmp);
        if let Some(root) = std::env::var_os("SystemRoot") {
            cmd.env("SystemRoot", root);
        }
        cmd.output().expect("scimcp-setup runs")
    }

    /// The temporary directory [`Env::run_networked`] gives the child.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// `scimcp-<version>-<target>.zip` in `dir`, built from a fake bundle; signed (its
    /// `.sigstore.json` beside it) when `signed`.
    pub fn zip(&self, dir: &Path, version: &str, signed: bool) -> PathBuf {
        let src = fake_bundle(
            &self.root.join("src"),
            &format!("scimcp-{version}"),
            Some(version),
        );
        fs_err::create_dir_all(dir).unwrap();
        let out = dir.join(format!("scimcp-{version}-{}.zip", target()));
        zip_dir(&src, &out);
        if signed {
            let bundle = self.sign(&fs_err::read(&out).unwrap());
            fs_err::write(scimcp_verify::bundle_path(&out), bundle).unwrap();
        }
        out
    }

    pub fn state(&self) -> serde_json::Value {
        serde_json::from_slice(&fs_err::read(self.data.join("state.json")).unwrap()).unwrap()
    }

    /// Every file under the home and the data root with a hash of its bytes, except the
    /// setup lock (hashes keep a failure message readable).
    pub fn tree(&self) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        let mut stack = vec![self.home.clone(), self.data.clone()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = fs_err::read_dir(&d) else {
                continue;
            };
            for e in entries {
                let p = e.unwrap().path();
                if p.is_dir() {
                    out.push((p.clone(), 0));
                    stack.push(p);
                } else if !p.ends_with(".setup.lock") {
                    let mut hasher = std::collections::hash_map::DefaultHasher::new();
                    bytes(&p).hash(&mut hasher);
                    out.push((p.clone(), hasher.finish()));
                }
            }
        }
        out.sort();
        out
    }
}

/// Zip `dir`'s files at the top of the zip (the layout of bundles before they had one
/// top-level folder).
pub fn zip_dir(dir: &Path, out: &Path) {
    zip_dir_in(dir, "", out);
}

/// Zip `dir`'s files under `prefix` (`scimcp-<version>-<target>/`, as `scimcp-release bundle`
/// lays a bundle out), or at the top when it is empty.
pub fn zip_dir_in(dir: &Path, prefix: &str, out: &Path) {
    let mut zip = zip::ZipWriter::new(fs_err::File::create(out).unwrap());
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in fs_err::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    for p in files {
        let rel = p
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .unix_permissions(0o755);
        zip.start_file(format!("{prefix}{rel}"), options).unwrap();
        zip.write_all(&fs_err::read(&p).unwrap()).unwrap();
    }
    zip.finish().unwrap();
}
