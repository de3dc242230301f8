//! A fake Sigstore on 127.0.0.1: Fulcio (a test CA that checks the proof of possession and
//! embeds an SCT from a test CT log), Rekor v1 (a Merkle tree with a signed checkpoint and SETs
//! from a test log key), and the GitHub Actions OIDC token endpoint. It speaks plain HTTP/1.1
//! on `std::net`, one connection at a time, which is all one signing run needs.
//!
//! [`FakeSigstore::trusted_root_json`] and [`FakeSigstore::signing_config_json`] name these
//! keys and URLs, so the real client and the real verifier run unchanged against it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use base64ct::{Base64, Base64UrlUnpadded, Encoding};
use jiff::{SignedDuration, Timestamp};
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{DerSignature, SigningKey, VerifyingKey};
use p256::elliptic_curve::Generate;
use p256::pkcs8::{DecodePublicKey, EncodePublicKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::der::*;

pub const GITHUB_ISSUER: &str = "https://token.actions.githubusercontent.com";
/// The secret the fake Actions runtime expects as the token request's bearer.
pub const RUNTIME_BEARER: &str = "runtime-request-secret";
/// Rekor shards: the global log index is the shard's index plus this.
const SHARD_OFFSET: u64 = 1_000_000;
/// Entries already in the fake log, so inclusion proofs have real paths.
const PRELOADED_ENTRIES: usize = 6;

/// Claims of a GitHub Actions ID token for a job of `repository` at `tag`, whose job runs
/// `signing_workflow` (called by `workflow`).
pub fn github_claims(repository: &str, workflow: &str, signing_workflow: &str, tag: &str) -> Value {
    json!({
        "iss": GITHUB_ISSUER,
        "aud": "sigstore",
        "sub": format!("repo:{repository}:ref:refs/tags/{tag}"),
        "repository": repository,
        "workflow_ref": format!("{repository}/{workflow}@refs/tags/{tag}"),
        "job_workflow_ref": format!("{repository}/{signing_workflow}@refs/tags/{tag}"),
        "exp": Timestamp::now().as_second() + 600,
    })
}

/// An unsigned JWT carrying `claims`: the fake Fulcio does not check token signatures (the
/// real one does), the client never does.
pub fn jwt(claims: &Value) -> String {
    format!(
        "{}.{}.{}",
        Base64UrlUnpadded::encode_string(br#"{"alg":"none","typ":"JWT"}"#),
        Base64UrlUnpadded::encode_string(claims.to_string().as_bytes()),
        Base64UrlUnpadded::encode_string(b"unsigned")
    )
}

#[derive(Default, Debug, Clone, Copy)]
pub struct Calls {
    pub fulcio: usize,
    pub rekor: usize,
    pub github: usize,
}

struct State {
    base_url: String,
    host: String,
    started: Timestamp,
    ca_key: SigningKey,
    ca_der: Vec<u8>,
    ct_key: SigningKey,
    log_key: SigningKey,
    leaves: Vec<Vec<u8>>,
    serial: u64,
    /// The token the fake Actions runtime hands out.
    ambient_claims: Value,
    calls: Calls,
}

pub struct FakeSigstore {
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
    thread: Option<JoinHandle<()>>,
}

fn spki(key: &SigningKey) -> Vec<u8> {
    key.verifying_key()
        .to_public_key_der()
        .unwrap()
        .as_bytes()
        .to_vec()
}

fn sign(key: &SigningKey, message: &[u8]) -> Vec<u8> {
    let signature: DerSignature = key.sign(message);
    signature.as_bytes().to_vec()
}

fn pem(label: &str, der: &[u8]) -> String {
    let b64 = Base64::encode_string(der);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

fn pem_body(text: &str) -> Vec<u8> {
    let b64: String = text
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat();
    Base64::decode_vec(&b64).unwrap()
}

fn certificate(tbs: Vec<u8>, issuer_key: &SigningKey) -> Vec<u8> {
    let signature = sign(issuer_key, &tbs);
    seq(&[tbs, ecdsa_sha256(), bits(&signature)])
}

fn root_certificate(key: &SigningKey, now: Timestamp) -> Vec<u8> {
    let day = SignedDuration::from_hours(24);
    let tbs = seq(&[
        explicit(0, &integer(2)),
        integer(1),
        ecdsa_sha256(),
        name("fake-fulcio-root"),
        seq(&[utc_time(now - day), utc_time(now + day)]),
        name("fake-fulcio-root"),
        spki(key),
        explicit(
            3,
            &seq(&[
                extension("2.5.29.19", true, &seq(&[boolean(true)])),
                // keyCertSign | cRLSign
                extension("2.5.29.15", true, &tlv(0x03, &[1, 0x06])),
            ]),
        ),
    ]);
    certificate(tbs, key)
}

impl State {
    /// A Fulcio leaf for `subject_spki`, with the identity GitHub tokens get and an SCT.
    fn leaf(&mut self, subject_spki: &[u8], claims: &Value) -> Vec<u8> {
        let now = Timestamp::now();
        self.serial += 1;
        let serial = self.serial;
        let san = format!(
            "https://github.com/{}",
            claims["job_workflow_ref"].as_str().unwrap()
        );
        let build_config = format!(
            "https://github.com/{}",
            claims["workflow_ref"].as_str().unwrap()
        );
        let mut extensions = vec![
            // digitalSignature
            extension("2.5.29.15", true, &tlv(0x03, &[7, 0x80])),
            // extKeyUsage: codeSigning
            extension("2.5.29.37", false, &seq(&[oid("1.3.6.1.5.5.7.3.3")])),
            // subjectAltName: URI
            extension("2.5.29.17", true, &seq(&[tlv(0x86, san.as_bytes())])),
            // Fulcio OIDC issuer (v2) and Build Config URI
            extension(
                "1.3.6.1.4.1.57264.1.8",
                false,
                &utf8(claims["iss"].as_str().unwrap()),
            ),
            extension("1.3.6.1.4.1.57264.1.18", false, &utf8(&build_config)),
        ];
        let fields = |extensions: &[Vec<u8>]| {
            seq(&[
                explicit(0, &integer(2)),
                integer(serial),
                ecdsa_sha256(),
                name("fake-fulcio-root"),
                seq(&[utc_time(now), utc_time(now + SignedDuration::from_mins(10))]),
                seq(&[]),
                subject_spki.to_vec(),
                explicit(3, &seq(extensions)),
            ])
        };
        // RFC 6962 §3.2: the CT log signs the precertificate TBS (no SCT extension yet).
        let precert_tbs = fields(&extensions);
        let timestamp_ms = now.as_millisecond() as u64;
        let issuer_key_hash = Sha256::digest(spki(&self.ca_key));
        let mut signed = vec![0u8, 0u8];
        signed.extend_from_slice(&timestamp_ms.to_be_bytes());
        signed.extend_from_slice(&1u16.to_be_bytes());
        signed.extend_from_slice(&issuer_key_hash);
        signed.extend_from_slice(&(precert_tbs.len() as u32).to_be_bytes()[1..]);
        signed.extend_from_slice(&precert_tbs);
        signed.extend_from_slice(&0u16.to_be_bytes());
        let sct_signature = sign(&self.ct_key, &signed);
        let mut sct = vec![0u8];
        sct.extend_from_slice(&Sha256::digest(spki(&self.ct_key)));
        sct.extend_from_slice(&timestamp_ms.to_be_bytes());
        sct.extend_from_slice(&0u16.to_be_bytes());
        sct.extend_from_slice(&[4, 3]); // sha256, ecdsa
        sct.extend_from_slice(&(sct_signature.len() as u16).to_be_bytes());
        sct.extend_from_slice(&sct_signature);
        let mut list = (sct.len() as u16).to_be_bytes().to_vec();
        list.extend_from_slice(&sct);
        let mut tls = (list.len() as u16).to_be_bytes().to_vec();
        tls.extend_from_slice(&list);
        extensions.push(extension("1.3.6.1.4.1.11129.2.4.2", false, &octets(&tls)));
        certificate(fields(&extensions), &self.ca_key)
    }

    fn log_id(&self) -> Vec<u8> {
        Sha256::digest(spki(&self.log_key)).to_vec()
    }

    fn fulcio(&mut self, request: &Request) -> (u16, Value) {
        self.calls.fulcio += 1;
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let token = body["credentials"]["oidcIdentityToken"]
            .as_str()
            .unwrap_or_default();
        if request.bearer.as_deref() != Some(token) {
            return (
                401,
                json!({"code": 16, "message": "bearer and credentials differ"}),
            );
        }
        let claims: Value = serde_json::from_slice(
            &Base64UrlUnpadded::decode_vec(token.split('.').nth(1).unwrap_or_default())
                .unwrap_or_default(),
        )
        .unwrap_or(Value::Null);
        let Some(sub) = claims["sub"].as_str() else {
            return (401, json!({"code": 16, "message": "no sub claim"}));
        };
        let key_pem = body["publicKeyRequest"]["publicKey"]["content"]
            .as_str()
            .unwrap_or_default();
        let Ok(key) = VerifyingKey::from_public_key_pem(key_pem) else {
            return (400, json!({"code": 3, "message": "bad public key"}));
        };
        let proof = Base64::decode_vec(
            body["publicKeyRequest"]["proofOfPossession"]
                .as_str()
                .unwrap_or_default(),
        )
        .unwrap_or_default();
        let proof_ok = DerSignature::from_bytes(&proof)
            .is_ok_and(|sig| key.verify(sub.as_bytes(), &sig).is_ok());
        if !proof_ok {
            return (
                400,
                json!({"code": 3, "message": "the proof of possession does not sign the sub claim"}),
            );
        }
        let leaf = self.leaf(&pem_body(key_pem), &claims);
        (
            201,
            json!({"signedCertificateEmbeddedSct": {"chain": {"certificates": [
                pem("CERTIFICATE", &leaf),
                pem("CERTIFICATE", &self.ca_der),
            ]}}}),
        )
    }

    fn rekor(&mut self, request: &Request) -> (u16, Value) {
        self.calls.rekor += 1;
        let proposed: Value = serde_json::from_slice(&request.body).unwrap();
        if proposed["kind"] != "hashedrekord" || proposed["apiVersion"] != "0.0.1" {
            return (
                400,
                json!({"code": 400, "message": "unsupported entry kind"}),
            );
        }
        let spec = &proposed["spec"];
        // Rekor stores the entry as canonical JSON (sorted keys, no spaces).
        let body = format!(
            r#"{{"apiVersion":"0.0.1","kind":"hashedrekord","spec":{{"data":{{"hash":{{"algorithm":"{}","value":"{}"}}}},"signature":{{"content":"{}","publicKey":{{"content":"{}"}}}}}}}}"#,
            spec["data"]["hash"]["algorithm"].as_str().unwrap(),
            spec["data"]["hash"]["value"].as_str().unwrap(),
            spec["signature"]["content"].as_str().unwrap(),
            spec["signature"]["publicKey"]["content"].as_str().unwrap(),
        );
        self.leaves.push(body.clone().into_bytes());
        let index = self.leaves.len() - 1;
        let hashes: Vec<[u8; 32]> = self.leaves.iter().map(|l| leaf_hash(l)).collect();
        let root = tree_hash(&hashes);
        let proof = audit_path(index, &hashes);
        let size = hashes.len();
        let log_index = SHARD_OFFSET + index as u64;
        let integrated_time = Timestamp::now().as_second();
        let log_id_hex = hex::encode(self.log_id());
        let body_b64 = Base64::encode_string(body.as_bytes());
        let set_payload = format!(
            r#"{{"body":"{body_b64}","integratedTime":{integrated_time},"logID":"{log_id_hex}","logIndex":{log_index}}}"#
        );
        let set = Base64::encode_string(&sign(&self.log_key, set_payload.as_bytes()));
        let note = format!(
            "{} - 424242\n{size}\n{}\n",
            self.host,
            Base64::encode_string(&root)
        );
        let mut hint_and_signature = self.log_id()[..4].to_vec();
        hint_and_signature.extend(sign(&self.log_key, note.as_bytes()));
        let checkpoint = format!(
            "{note}\n\u{2014} {} {}\n",
            self.host,
            Base64::encode_string(&hint_and_signature)
        );
        let uuid = hex::encode(leaf_hash(body.as_bytes()));
        (
            201,
            json!({ uuid: {
                "body": body_b64,
                "integratedTime": integrated_time,
                "logID": log_id_hex,
                "logIndex": log_index,
                "verification": {
                    "signedEntryTimestamp": set,
                    "inclusionProof": {
                        "checkpoint": checkpoint,
                        "hashes": proof.iter().map(hex::encode).collect::<Vec<_>>(),
                        "logIndex": index,
                        "rootHash": hex::encode(root),
                        "treeSize": size,
                    },
                },
            }}),
        )
    }

    fn github(&mut self, request: &Request) -> (u16, Value) {
        self.calls.github += 1;
        if request.bearer.as_deref() != Some(RUNTIME_BEARER) {
            return (401, json!({"message": "bad runtime token"}));
        }
        if !request.path.contains("api-version=2.0&audience=sigstore") {
            return (
                400,
                json!({"message": format!("unexpected query in {}", request.path)}),
            );
        }
        (200, json!({"count": 1, "value": jwt(&self.ambient_claims)}))
    }
}

fn leaf_hash(entry: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(entry);
    h.finalize().into()
}

fn node_hash(left: &[u8], right: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// RFC 6962 §2.1 Merkle tree hash.
fn tree_hash(leaves: &[[u8; 32]]) -> [u8; 32] {
    if leaves.len() == 1 {
        return leaves[0];
    }
    let k = leaves.len().next_power_of_two() / 2;
    node_hash(&tree_hash(&leaves[..k]), &tree_hash(&leaves[k..]))
}

/// RFC 6962 §2.1.1 audit path of leaf `m`.
fn audit_path(m: usize, leaves: &[[u8; 32]]) -> Vec<[u8; 32]> {
    if leaves.len() == 1 {
        return Vec::new();
    }
    let k = leaves.len().next_power_of_two() / 2;
    if m < k {
        let mut path = audit_path(m, &leaves[..k]);
        path.push(tree_hash(&leaves[k..]));
        path
    } else {
        let mut path = audit_path(m - k, &leaves[k..]);
        path.push(tree_hash(&leaves[..k]));
        path
    }
}

struct Request {
    method: String,
    path: String,
    bearer: Option<String>,
    body: Vec<u8>,
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut length = 0usize;
    let mut bearer = None;
    let mut expect_continue = false;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().ok()?,
            "authorization" => {
                bearer = value
                    .strip_prefix("Bearer ")
                    .or_else(|| value.strip_prefix("bearer "))
                    .map(str::to_owned);
            }
            "expect" => expect_continue = value.eq_ignore_ascii_case("100-continue"),
            _ => {}
        }
    }
    if expect_continue {
        (&*stream)
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .ok()?;
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        bearer,
        body,
    })
}

fn respond(mut stream: &TcpStream, status: u16, body: &Value) {
    let body = body.to_string();
    let reason = match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        _ => "Not Found",
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

impl FakeSigstore {
    /// Start the fake; the Actions runtime hands out a token with `ambient_claims`.
    pub fn start(ambient_claims: Value) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let now = Timestamp::now();
        let ca_key = SigningKey::generate();
        let ca_der = root_certificate(&ca_key, now);
        let mut leaves: Vec<Vec<u8>> = Vec::new();
        for i in 0..PRELOADED_ENTRIES {
            leaves.push(format!("{{\"preloaded\":{i}}}").into_bytes());
        }
        let state = Arc::new(Mutex::new(State {
            base_url: format!("http://{addr}"),
            host: addr.to_string(),
            started: now,
            ca_key,
            ca_der,
            ct_key: SigningKey::generate(),
            log_key: SigningKey::generate(),
            leaves,
            serial: 1,
            ambient_claims,
            calls: Calls::default(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let Some(request) = read_request(&stream) else {
                        continue;
                    };
                    let mut state = state.lock().unwrap();
                    let route = request.path.split('?').next().unwrap_or_default();
                    let (status, body) = match (request.method.as_str(), route) {
                        ("POST", "/api/v2/signingCert") => state.fulcio(&request),
                        ("POST", "/api/v1/log/entries") => state.rekor(&request),
                        ("GET", "/actions-token") => state.github(&request),
                        _ => (404, json!({"message": "no such route"})),
                    };
                    drop(state);
                    respond(&stream, status, &body);
                }
            })
        };
        FakeSigstore {
            state,
            stop,
            addr,
            thread: Some(thread),
        }
    }

    pub fn base_url(&self) -> String {
        self.state.lock().unwrap().base_url.clone()
    }

    /// `ACTIONS_ID_TOKEN_REQUEST_URL` as the Actions runtime sets it (with a query already).
    pub fn actions_token_url(&self) -> String {
        format!("{}/actions-token?api-version=2.0", self.base_url())
    }

    pub fn calls(&self) -> Calls {
        self.state.lock().unwrap().calls
    }

    /// A trusted root naming the fake CA, CT log and Rekor log.
    pub fn trusted_root_json(&self) -> String {
        let state = self.state.lock().unwrap();
        let valid_for = json!({
            "start": (state.started - SignedDuration::from_hours(24)).to_string()
        });
        let log = |base_url: &str, key: &SigningKey| {
            json!({
                "baseUrl": base_url,
                "hashAlgorithm": "SHA2_256",
                "publicKey": {
                    "rawBytes": Base64::encode_string(&spki(key)),
                    "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                    "validFor": valid_for,
                },
                "logId": { "keyId": Base64::encode_string(&Sha256::digest(spki(key))) },
            })
        };
        json!({
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(&state.base_url, &state.log_key)],
            "certificateAuthorities": [{
                "subject": { "organization": "fake", "commonName": "fake-fulcio-root" },
                "uri": state.base_url,
                "certChain": { "certificates": [{ "rawBytes": Base64::encode_string(&state.ca_der) }] },
                "validFor": valid_for,
            }],
            "ctlogs": [log(&format!("{}/ct", state.base_url), &state.ct_key)],
            "timestampAuthorities": [],
        })
        .to_string()
    }

    /// A signing config pointing the signer at this fake.
    pub fn signing_config_json(&self) -> String {
        let state = self.state.lock().unwrap();
        let service = json!([{
            "url": state.base_url,
            "majorApiVersion": 1,
            "validFor": { "start": (state.started - SignedDuration::from_hours(24)).to_string() },
            "operator": "fake",
        }]);
        json!({
            "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
            "caUrls": service,
            "oidcUrls": [],
            "rekorTlogUrls": service,
            "tsaUrls": [],
            "rekorTlogConfig": { "selector": "ANY" },
            "tsaConfig": { "selector": "ANY" },
        })
        .to_string()
    }
}

impl Drop for FakeSigstore {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
