//! The MCP App run viewer: one HTML page, served as the `ui://scimcp/run-viewer` resource
//! (MCP Apps, `io.modelcontextprotocol/ui`), that a client supporting Apps renders beside
//! the run and campaign tools' answers.
//!
//! The page is `viewer.html` with `viewer.css` and `viewer.js` placed inline at build time
//! (`include_str!`), so the served resource is self-contained: it loads nothing from any
//! network, CDN or the resource's origin. Its own Content-Security-Policy `<meta>` allows
//! exactly the inline style and script by their SHA-256 (no `'unsafe-inline'`), images only
//! as `data:` URLs (the viewer reads image artifacts through the host with
//! `resources/read`), and no connections, frames, forms, objects or base URI; the
//! resource's `_meta.ui.csp` declares no domains, so a host builds the spec's strictest
//! policy around it. Everything the page shows it asks for through the host (`tools/call`,
//! `resources/read` over the Apps postMessage protocol), so the server's own checks,
//! paging and confirmation apply to it as to any client.
//!
//! Tools in [`VIEWER_TOOLS`] carry `_meta.ui.resourceUri` (and the deprecated flat
//! `ui/resourceUri`) always; their text and structured content stay the whole answer for
//! clients without Apps.

use std::sync::OnceLock;

use base64ct::{Base64, Encoding as _};
use rmcp::model::{MetaObject, Resource, ResourceContents};
use sha2::{Digest as _, Sha256};

/// The viewer's URI.
pub const VIEWER_URI: &str = "ui://scimcp/run-viewer";
/// The MIME type MCP Apps requires of an app's HTML.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The tools whose answers the viewer renders: a run's or a campaign's start and status.
/// Read where the checked-in catalog is generated and checked (test builds): the served
/// catalog is that file, so the meta reaches clients through it.
#[cfg(test)]
pub const VIEWER_TOOLS: &[&str] = &[
    "start_analysis",
    "get_run_status",
    "get_run_result",
    "start_campaign",
    "get_campaign_status",
];

const TEMPLATE: &str = include_str!("viewer.html");
const STYLE: &str = include_str!("viewer.css");
const SCRIPT: &str = include_str!("viewer.js");

/// `'sha256-…'`, the CSP source that allows one inline element with exactly `text`.
fn csp_hash(text: &str) -> String {
    format!(
        "'sha256-{}'",
        Base64::encode_string(&Sha256::digest(text.as_bytes()))
    )
}

/// The policy the page declares for itself.
pub fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; connect-src 'none'; \
         frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'",
        csp_hash(SCRIPT),
        csp_hash(STYLE)
    )
}

/// The served page: the template with its policy, style and script in place.
pub fn html() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        // Filled in one pass each, in this order, so a placeholder spelled inside the
        // script or style is never replaced.
        TEMPLATE
            .replacen("{{CSP}}", &content_security_policy(), 1)
            .replacen("{{STYLE}}", STYLE, 1)
            .replacen("{{SCRIPT}}", SCRIPT, 1)
    })
}

/// `_meta` of the resource: no network domain of any kind, a border around the view.
fn resource_meta() -> MetaObject {
    let mut meta = MetaObject::new();
    meta.insert(
        "ui".into(),
        serde_json::json!({
            "csp": {
                "connectDomains": [],
                "resourceDomains": [],
                "frameDomains": [],
                "baseUriDomains": [],
            },
            "prefersBorder": true,
        }),
    );
    meta
}

/// The viewer as `resources/list` shows it.
pub fn resource() -> Resource {
    Resource::new(VIEWER_URI, "run-viewer")
        .with_title("scimcp run viewer")
        .with_description(
            "MCP App: a run's or campaign's status and progress, metrics, artifacts with \
             sizes and SHA-256, images, paged tables, a campaign chart, and cancel.",
        )
        .with_mime_type(MIME_TYPE)
        .with_size(html().len() as u64)
        .with_meta(resource_meta())
}

/// `resources/read` of `uri` when it is the viewer's.
pub fn read(uri: &str) -> Option<ResourceContents> {
    (uri == VIEWER_URI).then(|| {
        ResourceContents::text(html(), VIEWER_URI)
            .with_mime_type(MIME_TYPE)
            .with_meta(resource_meta())
    })
}

/// The `_meta` a tool named `name` carries, when the viewer renders its answers.
#[cfg(test)]
pub fn tool_meta(name: &str) -> Option<MetaObject> {
    VIEWER_TOOLS.contains(&name).then(|| {
        let mut meta = MetaObject::new();
        meta.insert(
            "ui".into(),
            serde_json::json!({ "resourceUri": VIEWER_URI }),
        );
        // The flat key of the first Apps drafts, which hosts still read.
        meta.insert("ui/resourceUri".into(), VIEWER_URI.into());
        meta
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained_with_a_strict_policy() {
        let page = html();
        assert!(page.starts_with("<!doctype html>"), "{}", &page[..40]);
        for placeholder in ["{{CSP}}", "{{STYLE}}", "{{SCRIPT}}"] {
            assert!(
                !page.contains(placeholder),
                "{placeholder} left in the page"
            );
        }
        // The inline script and style end only where the template ends them.
        assert!(!SCRIPT.to_ascii_lowercase().contains("</script"));
        assert!(!STYLE.to_ascii_lowercase().contains("</style"));
        // Nothing is loaded from anywhere: no external script, style, image or URL.
        let lower = page.to_ascii_lowercase();
        for banned in ["src=\"http", "href=\"http", "<link", "@import", "://cdn"] {
            assert!(!lower.contains(banned), "the page contains {banned:?}");
        }
        assert!(!STYLE.contains("url("), "the style loads something");
        let policy = content_security_policy();
        assert!(page.contains(&format!("content=\"{policy}\"")));
        assert!(policy.contains(&csp_hash(SCRIPT)) && policy.contains(&csp_hash(STYLE)));
        assert!(!policy.contains("unsafe"), "{policy}");
        assert!(policy.contains("connect-src 'none'") && policy.contains("img-src data:"));
        // The hashes cover exactly what sits between the tags.
        assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains(&format!("<style>{STYLE}</style>")));
    }

    #[test]
    fn the_resource_reads_as_an_mcp_app_with_no_domains() {
        let listed = resource();
        assert_eq!(listed.uri, VIEWER_URI);
        assert_eq!(listed.mime_type.as_deref(), Some(MIME_TYPE));
        let read = read(VIEWER_URI).expect("the viewer's URI reads");
        let value = serde_json::to_value(&read).unwrap();
        assert_eq!(value["mimeType"], MIME_TYPE);
        assert_eq!(value["text"], html());
        let csp = &value["_meta"]["ui"]["csp"];
        for key in [
            "connectDomains",
            "resourceDomains",
            "frameDomains",
            "baseUriDomains",
        ] {
            assert_eq!(csp[key], serde_json::json!([]), "{key}");
        }
        assert!(super::read("ui://scimcp/other").is_none());
    }

    #[test]
    fn the_viewer_tools_carry_its_uri() {
        for name in VIEWER_TOOLS {
            let meta = serde_json::to_value(tool_meta(name).unwrap()).unwrap();
            assert_eq!(meta["ui"]["resourceUri"], VIEWER_URI);
            assert_eq!(meta["ui/resourceUri"], VIEWER_URI);
        }
        assert!(tool_meta("list_datasets").is_none());
    }
}

#[cfg(test)]
mod catalog_tests {
    /// What `tools/list` serves: the viewer's tools carry its URI, the others nothing.
    #[test]
    fn the_served_tools_carry_the_viewer_meta() {
        for tool in crate::tools::catalog() {
            let meta = tool.meta.as_ref().map(|m| serde_json::to_value(m).unwrap());
            if super::VIEWER_TOOLS.contains(&tool.name.as_ref()) {
                let meta = meta.unwrap_or_else(|| panic!("{} has no _meta", tool.name));
                assert_eq!(
                    meta["ui"]["resourceUri"],
                    super::VIEWER_URI,
                    "{}",
                    tool.name
                );
                assert_eq!(meta["ui/resourceUri"], super::VIEWER_URI, "{}", tool.name);
            } else {
                assert!(meta.is_none(), "{} carries {meta:?}", tool.name);
            }
        }
    }
}
