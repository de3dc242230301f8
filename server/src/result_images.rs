//! A finished run's images as MCP content, so a client shows the scientist the run's plots
//! and diagrams instead of only their paths and hashes.
//!
//! `get_run_result` answers with its JSON (text and structured content, unchanged); when the
//! run has ended and its result is shown, [`attach`] appends:
//! - one text block saying which images follow and which were left out, and why;
//! - raster images (PNG, JPEG, GIF, WebP) as `image` content, base64 with their `mimeType`,
//!   the workflow's *declared* image artifacts first, then undeclared image files, each in
//!   `result.json` order, at most [`Bounds::max_images`] of them, each at most
//!   [`Bounds::max_image_bytes`] and all together at most [`Bounds::max_total_bytes`];
//! - the images that do not fit, and every SVG (many clients draw only raster images, and an
//!   embedded SVG would reach the model as thousands of tokens of XML), as `resource_link`s to
//!   the run's artifact resources, at most [`Bounds::max_links`].
//!
//! Every attached image is read as the artifact resources are: below the run's directory
//! without following links, no larger than recorded, and attached only when its SHA-256
//! still matches `result.json`, and only when its first bytes are what its type says (an API
//! that receives a "PNG" that is not one refuses the client's whole request).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64ct::{Base64, Encoding as _};
use rmcp::model::{CallToolResult, ContentBlock, Resource};
use scimcp_core::manifest::ArtifactBase;

use crate::context::ServerContext;
use crate::runs::state::{ArtifactRecord, RunResult};

/// The tool whose answers carry images.
pub const TOOL: &str = "get_run_result";

/// How much image content one answer may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Images attached as content.
    pub max_images: usize,
    /// Largest image attached (bytes before base64).
    pub max_image_bytes: u64,
    /// All attached images together (bytes before base64).
    pub max_total_bytes: u64,
    /// Resource links for the images not attached.
    pub max_links: usize,
}

/// The bounds `get_run_result` uses: 8 images, 1 MiB each, 4 MiB in all (about 5.4 MiB of
/// base64), 16 links. A client sends every image to its model with every later turn, and
/// model APIs refuse requests much above that (Anthropic's: 5 MB per image, 32 MB per
/// request).
pub const BOUNDS: Bounds = Bounds {
    max_images: 8,
    max_image_bytes: 1024 * 1024,
    max_total_bytes: 4 * 1024 * 1024,
    max_links: 16,
};

/// Raster types clients draw, with the first bytes each file of that type starts with.
const RASTER: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];
const SVG: &str = "image/svg+xml";

/// What [`gallery`] made of a run's images.
#[derive(Debug, Default)]
pub struct Gallery {
    /// The text block, then the images, then the links; empty when the run has no images.
    pub blocks: Vec<ContentBlock>,
    /// Artifact paths attached as image content, in order.
    pub attached: Vec<String>,
    /// Artifact paths given as resource links, in order.
    pub linked: Vec<String>,
}

/// Append the images of the run this `get_run_result` answer shows (see the module doc).
/// Anything else (an error, a pending or `not_modified` answer, another tool) is left as it is.
pub async fn attach(ctx: &Arc<ServerContext>, answer: &mut CallToolResult) {
    if answer.is_error == Some(true) {
        return;
    }
    let Some(run_id) = answer
        .structured_content
        .as_ref()
        .filter(|s| s["terminal"] == true)
        .and_then(|s| s["result"]["run_id"].as_str())
        .map(str::to_string)
    else {
        return;
    };
    let ctx = Arc::clone(ctx);
    // Reading result.json and the images is blocking work: off the async workers.
    let made = tokio::task::spawn_blocking(move || {
        ctx.runs
            .result(&run_id)
            .map(|found| found.map(|(result, _)| gallery(&result, &BOUNDS)))
    })
    .await;
    match made {
        Ok(Ok(Some(gallery))) => answer.content.extend(gallery.blocks),
        Ok(Ok(None)) => {}
        // The JSON answer stands without its images; the artifacts are still listed there.
        Ok(Err(e)) => tracing::warn!("the run's images were not attached: {}", e.message),
        Err(e) => tracing::warn!("attaching the run's images panicked: {e}"),
    }
}

/// The base type of a media type, lower case (`image/PNG; x=y` → `image/png`).
fn base_type(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether `bytes` start as a file of the raster type `mime` does.
fn looks_like(mime: &str, bytes: &[u8]) -> bool {
    match mime {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xff, 0xd8, 0xff]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        _ => false,
    }
}

/// The directory an artifact's path is relative to (as the artifact resources read it).
fn base_dir(result: &RunResult, base: ArtifactBase) -> PathBuf {
    match base {
        ArtifactBase::Output | ArtifactBase::Stdout | ArtifactBase::Stderr => {
            PathBuf::from(&result.output_dir)
        }
        ArtifactBase::Work => Path::new(&result.run_dir).join("work"),
    }
}

/// Why an image could not be attached.
#[derive(Debug, thiserror::Error)]
enum Unattachable {
    #[error("it cannot be read: {0}")]
    Unreadable(String),
    #[error("it changed since the run ended (its SHA-256 no longer matches result.json)")]
    Changed,
    #[error("its first bytes are not those of {0}")]
    NotItsType(String),
}

/// The artifact's bytes, read confined below its directory and checked against its record.
fn read_checked(
    result: &RunResult,
    record: &ArtifactRecord,
    mime: &str,
) -> Result<Vec<u8>, Unattachable> {
    let dir = base_dir(result, record.base);
    let mut opened = crate::datasets::open::open_confined(
        &dir,
        Path::new(&record.path),
        &record.path,
        record.size_bytes,
    )
    .map_err(|e| Unattachable::Unreadable(e.message))?;
    let mut bytes = Vec::with_capacity(record.size_bytes as usize);
    opened
        .capped(&record.path, record.size_bytes)
        .and_then(|mut reader| reader.read_to_end(&mut bytes))
        .map_err(|e| Unattachable::Unreadable(e.to_string()))?;
    if scimcp_core::hash::sha256_hex(&bytes) != record.sha256 {
        return Err(Unattachable::Changed);
    }
    if !looks_like(mime, &bytes) {
        return Err(Unattachable::NotItsType(mime.to_string()));
    }
    Ok(bytes)
}

/// The run's images as content within `bounds` (see the module doc).
pub fn gallery(result: &RunResult, bounds: &Bounds) -> Gallery {
    // Declared image artifacts first, then the undeclared image files; each in record order.
    let mut images: Vec<(&ArtifactRecord, String)> = result
        .artifacts
        .iter()
        .map(|a| (a, base_type(&a.media_type)))
        .filter(|(_, mime)| RASTER.contains(&mime.as_str()) || mime == SVG)
        .collect();
    if images.is_empty() {
        return Gallery::default();
    }
    images.sort_by_key(|(a, _)| a.id.is_none());
    let mut gallery = Gallery::default();
    let mut shown = Vec::new();
    let mut left_out: Vec<String> = Vec::new();
    let mut links = Vec::new();
    let mut total = 0u64;
    let mut unlinked = 0usize;
    for (record, mime) in &images {
        let why = if mime == SVG {
            Some("SVG is linked, not attached: many clients draw only raster images".to_string())
        } else if gallery.attached.len() >= bounds.max_images {
            Some(format!(
                "over the {} images one answer attaches",
                bounds.max_images
            ))
        } else if record.size_bytes > bounds.max_image_bytes {
            Some(format!(
                "{} bytes, over the {}-byte bound per image",
                record.size_bytes, bounds.max_image_bytes
            ))
        } else if total + record.size_bytes > bounds.max_total_bytes {
            Some(format!(
                "would pass the {}-byte bound for all images of one answer",
                bounds.max_total_bytes
            ))
        } else {
            match read_checked(result, record, mime) {
                Ok(bytes) => {
                    total += record.size_bytes;
                    shown.push(ContentBlock::image(
                        Base64::encode_string(&bytes),
                        mime.clone(),
                    ));
                    gallery.attached.push(record.path.clone());
                    None
                }
                Err(e) => Some(e.to_string()),
            }
        };
        let Some(why) = why else { continue };
        if links.len() >= bounds.max_links {
            unlinked += 1;
            continue;
        }
        left_out.push(format!("{} ({why})", record.path));
        let uri = crate::resources::artifact_uri(&result.run_id, record.base, &record.path);
        links.push(ContentBlock::resource_link(
            Resource::new(uri, record.path.clone())
                .with_mime_type(record.media_type.clone())
                .with_size(record.size_bytes)
                .with_description(format!(
                    "An image of run {}, not attached: {why}",
                    result.run_id
                )),
        ));
        gallery.linked.push(record.path.clone());
    }
    let mut note = format!(
        "Images of run {}: {} attached below",
        result.run_id,
        gallery.attached.len()
    );
    if !gallery.attached.is_empty() {
        note.push_str(&format!(" ({})", gallery.attached.join(", ")));
    }
    note.push('.');
    if !left_out.is_empty() {
        note.push_str(&format!(
            " Not attached, linked as resources instead: {}.",
            left_out.join("; ")
        ));
    }
    if unlinked > 0 {
        note.push_str(&format!(
            " {unlinked} more images are neither attached nor linked (at most {} links per answer); result.artifacts lists them.",
            bounds.max_links
        ));
    }
    gallery.blocks.push(ContentBlock::text(note));
    gallery.blocks.extend(shown);
    gallery.blocks.extend(links);
    gallery
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n-a-test-png-body";

    fn record(id: Option<&str>, path: &str, media_type: &str, bytes: &[u8]) -> ArtifactRecord {
        ArtifactRecord {
            id: id.map(str::to_string),
            path: path.to_string(),
            media_type: media_type.to_string(),
            size_bytes: bytes.len() as u64,
            sha256: scimcp_core::hash::sha256_hex(bytes),
            base: ArtifactBase::Output,
        }
    }

    /// A run result whose output directory holds `files` (path, media type, bytes, declared).
    fn run_with(dir: &Path, files: &[(&str, &str, Vec<u8>, bool)]) -> RunResult {
        let output = dir.join("output");
        fs_err::create_dir_all(&output).unwrap();
        let mut artifacts = Vec::new();
        for (path, media_type, bytes, declared) in files {
            fs_err::write(output.join(path), bytes).unwrap();
            artifacts.push(record(declared.then_some("plot"), path, media_type, bytes));
        }
        let mut result: RunResult = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": "run-0123456789abcdef", "state": "succeeded",
            "adapter": {"name": "a", "version": "1", "sha256": "0".repeat(64)},
            "workflow": "w", "validation_id": "val-0", "request_sha256": "0".repeat(64),
            "plan_sha256": "0".repeat(64), "started_at": null, "ended_at": "2026-01-01T00:00:00Z",
            "duration_ms": 1, "run_dir": dir.display().to_string(),
            "output_dir": output.display().to_string(),
            "artifacts": [], "problems": [], "reported": {}, "skipped": []
        }))
        .unwrap();
        result.artifacts = artifacts;
        result
    }

    fn png(n: usize) -> Vec<u8> {
        let mut b = PNG.to_vec();
        b.resize(n.max(PNG.len()), b'x');
        b
    }

    fn image_bytes(block: &ContentBlock) -> Option<(Vec<u8>, String)> {
        block
            .as_image()
            .map(|i| (Base64::decode_vec(&i.data).unwrap(), i.mime_type.clone()))
    }

    #[test]
    fn declared_images_come_first_and_hash_to_their_records() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_with(
            dir.path(),
            &[
                ("a_extra.png", "image/png", png(40), false),
                ("forecast.csv", "text/csv", b"t,v\n".to_vec(), false),
                ("plot.png", "image/png", png(50), true),
            ],
        );
        let g = gallery(&run, &BOUNDS);
        assert_eq!(g.attached, ["plot.png", "a_extra.png"]);
        assert!(g.linked.is_empty());
        let note = g.blocks[0].as_text().unwrap().text.clone();
        assert!(
            note.contains("2 attached below (plot.png, a_extra.png)"),
            "{note}"
        );
        let (bytes, mime) = image_bytes(&g.blocks[1]).unwrap();
        assert_eq!(mime, "image/png");
        assert_eq!(
            scimcp_core::hash::sha256_hex(&bytes),
            run.artifacts[2].sha256
        );
        assert_eq!(g.blocks.len(), 3);
    }

    #[test]
    fn a_run_without_images_gets_no_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_with(
            dir.path(),
            &[("m.json", "application/json", b"{}".to_vec(), true)],
        );
        assert!(gallery(&run, &BOUNDS).blocks.is_empty());
    }

    #[test]
    fn bounds_on_count_size_and_total_turn_images_into_links() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<(String, Vec<u8>)> =
            (0..6).map(|i| (format!("d{i}.png"), png(100))).collect();
        let mut spec: Vec<(&str, &str, Vec<u8>, bool)> = files
            .iter()
            .map(|(p, b)| (p.as_str(), "image/png", b.clone(), true))
            .collect();
        spec.push(("huge.png", "image/png", png(500), true));
        spec.push(("vector.svg", "image/svg+xml", b"<svg/>".to_vec(), true));
        let run = run_with(dir.path(), &spec);
        let bounds = Bounds {
            max_images: 4,
            max_image_bytes: 200,
            max_total_bytes: 350,
            max_links: 3,
        };
        let g = gallery(&run, &bounds);
        // 3 × 100 bytes fit the 350-byte total; the fourth would pass it.
        assert_eq!(g.attached, ["d0.png", "d1.png", "d2.png"]);
        assert_eq!(g.linked, ["d3.png", "d4.png", "d5.png"]);
        let note = g.blocks[0].as_text().unwrap().text.clone();
        assert!(note.contains("would pass the 350-byte bound"), "{note}");
        assert!(
            note.contains("2 more images are neither attached nor linked"),
            "{note}"
        );
        let links: Vec<&Resource> = g
            .blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ResourceLink(r) => Some(r),
                _ => None,
            })
            .collect();
        assert_eq!(links.len(), 3);
        assert_eq!(
            links[0].uri,
            "scimcp://runs/run-0123456789abcdef/artifacts/d3.png"
        );
        assert_eq!(links[0].size, Some(100));

        // With room for links, the oversized one and the SVG are linked with their reason.
        let g = gallery(
            &run,
            &Bounds {
                max_links: 16,
                ..bounds
            },
        );
        let note = g.blocks[0].as_text().unwrap().text.clone();
        assert!(
            note.contains("huge.png (500 bytes, over the 200-byte bound per image)"),
            "{note}"
        );
        assert!(note.contains("vector.svg (SVG is linked"), "{note}");
        // The count bound: four images at most, however small.
        let g = gallery(
            &run,
            &Bounds {
                max_total_bytes: 1 << 20,
                max_links: 16,
                ..bounds
            },
        );
        assert_eq!(g.attached.len(), 4);
        assert!(
            g.blocks[0]
                .as_text()
                .unwrap()
                .text
                .contains("over the 4 images one answer attaches")
        );
    }

    #[test]
    fn a_changed_or_mislabelled_image_is_linked_not_attached() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = run_with(
            dir.path(),
            &[
                ("changed.png", "image/png", png(30), true),
                ("fake.png", "image/png", b"not a png at all".to_vec(), true),
                (
                    "photo.jpg",
                    "image/jpeg",
                    vec![0xff, 0xd8, 0xff, 0xe0, 1, 2],
                    false,
                ),
            ],
        );
        // The file is rewritten after the run: same size, other bytes.
        let mut other = png(30);
        other[20] = b'y';
        fs_err::write(dir.path().join("output/changed.png"), other).unwrap();
        run.artifacts[0].size_bytes = 30;
        let g = gallery(&run, &BOUNDS);
        assert_eq!(g.attached, ["photo.jpg"]);
        assert_eq!(g.linked, ["changed.png", "fake.png"]);
        let note = g.blocks[0].as_text().unwrap().text.clone();
        assert!(note.contains("no longer matches result.json"), "{note}");
        assert!(note.contains("not those of image/png"), "{note}");
    }

    #[test]
    fn the_tool_exists() {
        assert!(crate::tools::TOOL_NAMES.contains(&TOOL));
    }

    #[test]
    fn magic_bytes() {
        assert!(looks_like("image/png", PNG));
        assert!(looks_like("image/gif", b"GIF89a..."));
        assert!(looks_like("image/webp", b"RIFF\0\0\0\0WEBPVP8 "));
        assert!(!looks_like("image/webp", b"RIFF\0\0\0\0WAVE"));
        assert!(!looks_like("image/jpeg", PNG));
        assert_eq!(base_type("Image/PNG; q=1"), "image/png");
    }
}
