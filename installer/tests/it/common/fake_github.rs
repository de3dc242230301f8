//! A fake GitHub on 127.0.0.1 for the release-download tests: the REST API's release listing
//! (two releases per page, with a `Link: rel="next"` header like GitHub's), the asset API
//! (JSON unless asked for octet-stream, then a redirect to the bytes, as GitHub does), and
//! browser download URLs (`/dl/<tag>/<name>`). Plain HTTP/1.1 on `std::net`, one connection at
//! a time; every request is logged so tests can prove what was (not) downloaded.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::json;

/// One release: its tag and its assets (name, bytes).
#[derive(Debug, Clone)]
pub struct Release {
    pub tag: String,
    pub assets: Vec<(String, Vec<u8>)>,
}

#[derive(Default)]
struct Shared {
    releases: Vec<Release>,
    log: Vec<String>,
    /// Answer the release listing with this status (e.g. a rate limit) instead.
    listing_status: Option<u16>,
    /// Answer every request whose path contains the text with the status.
    failing: Option<(String, u16)>,
}

pub struct FakeGitHub {
    pub base: String,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

const PAGE: usize = 2;

impl FakeGitHub {
    pub fn start(releases: Vec<Release>) -> FakeGitHub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Mutex::new(Shared {
            releases,
            ..Shared::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (shared, stop, base) = (shared.clone(), stop.clone(), base.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        let _ = serve(stream, &base, &shared);
                    }
                }
            })
        };
        FakeGitHub {
            base,
            shared,
            stop,
            thread: Some(thread),
        }
    }

    /// `METHOD PATH accept=<Accept header>` of every request so far.
    pub fn requests(&self) -> Vec<String> {
        self.shared.lock().unwrap().log.clone()
    }

    /// Requests for release files (not the listing).
    pub fn downloads(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| !r.contains("/releases"))
            .collect()
    }

    pub fn clear_log(&self) {
        self.shared.lock().unwrap().log.clear();
    }

    /// Make every request whose path contains `part` fail with `status` (`None`: none do).
    pub fn set_failing(&self, failing: Option<(&str, u16)>) {
        self.shared.lock().unwrap().failing = failing.map(|(p, s)| (p.to_owned(), s));
    }

    pub fn set_listing_status(&self, status: Option<u16>) {
        self.shared.lock().unwrap().listing_status = status;
    }

    /// Replace one asset's bytes.
    pub fn replace_asset(&self, name: &str, bytes: Vec<u8>) {
        let mut shared = self.shared.lock().unwrap();
        for release in &mut shared.releases {
            for asset in &mut release.assets {
                if asset.0 == name {
                    asset.1 = bytes.clone();
                }
            }
        }
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.base.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: TcpStream, base: &str, shared: &Mutex<Shared>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut accept = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("accept")
        {
            accept = value.trim().to_owned();
        }
    }
    let target = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let mut shared = shared.lock().unwrap();
    shared.log.push(format!(
        "{} {target} accept={accept}",
        request_line.split_whitespace().next().unwrap_or("")
    ));
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let failing = shared
        .failing
        .as_ref()
        .filter(|(part, _)| path.contains(part.as_str()))
        .map(|(_, status)| *status);
    let response = match segments.as_slice() {
        _ if failing.is_some() => Response::status(failing.unwrap_or(500), "Internal Server Error"),
        ["repos", _, _, "releases"] => match shared.listing_status {
            Some(status) => Response::status(status, "API rate limit exceeded")
                .header("x-ratelimit-remaining", "0"),
            None => listing(base, path, query, &shared.releases),
        },
        ["assets", id] => match asset(&shared.releases, id) {
            Some(_) if accept.contains("application/octet-stream") => {
                Response::status(302, "").header("Location", &format!("{base}/blob/{id}"))
            }
            Some((name, bytes)) => Response::json(&json!({
                "name": name, "size": bytes.len(), "url": format!("{base}/assets/{id}")
            })),
            None => Response::status(404, "Not Found"),
        },
        ["blob", id] => match asset(&shared.releases, id) {
            Some((_, bytes)) => Response::bytes(bytes.clone()),
            None => Response::status(404, "Not Found"),
        },
        ["dl", tag, name] => shared
            .releases
            .iter()
            .filter(|r| r.tag == *tag)
            .flat_map(|r| &r.assets)
            .find(|(n, _)| n == name)
            .map_or_else(
                || Response::status(404, "Not Found"),
                |(_, bytes)| Response::bytes(bytes.clone()),
            ),
        _ => Response::status(404, "Not Found"),
    };
    drop(shared);
    response.write(stream)
}

/// Asset ids are `<release index>-<asset index>`.
fn asset<'a>(releases: &'a [Release], id: &str) -> Option<&'a (String, Vec<u8>)> {
    let (r, a) = id.split_once('-')?;
    releases
        .get(r.parse::<usize>().ok()?)?
        .assets
        .get(a.parse::<usize>().ok()?)
}

fn listing(base: &str, path: &str, query: &str, releases: &[Release]) -> Response {
    let page: usize = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("page="))
        .and_then(|p| p.parse().ok())
        .unwrap_or(1);
    let items: Vec<serde_json::Value> = releases
        .iter()
        .enumerate()
        .skip((page - 1) * PAGE)
        .take(PAGE)
        .map(|(r, release)| {
            json!({
                "tag_name": release.tag,
                "name": release.tag,
                "created_at": "2026-11-30T00:00:00Z",
                "body": "",
                "html_url": format!("{base}/releases/{}", release.tag),
                "assets": release.assets.iter().enumerate().map(|(a, (name, _))| json!({
                    "name": name,
                    "url": format!("{base}/assets/{r}-{a}"),
                    "browser_download_url": format!("{base}/dl/{}/{name}", release.tag),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut response = Response::json(&serde_json::Value::Array(items));
    if page * PAGE < releases.len() {
        response = response.header(
            "Link",
            &format!("<{base}{path}?page={}>; rel=\"next\"", page + 1),
        );
    }
    response
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn status(status: u16, body: &str) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        }
    }

    fn json(value: &serde_json::Value) -> Response {
        Response::status(200, &value.to_string()).header("Content-Type", "application/json")
    }

    fn bytes(body: Vec<u8>) -> Response {
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), "application/octet-stream".into())],
            body,
        }
    }

    fn header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    fn write(self, mut stream: TcpStream) -> std::io::Result<()> {
        let mut head = format!(
            "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.status,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        stream.write_all(&self.body)?;
        stream.flush()
    }
}
