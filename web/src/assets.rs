//! The page and its bundle, embedded at build time. The bundle (xterm.js, its
//! fit addon and `page/app.js`; their styles) is committed in `web/assets/`,
//! built by `scripts/bundle-page`, so building fugue needs only cargo; the test
//! below fails when it no longer matches its sources.

use crate::AppState;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("../page/index.html");
const SCRIPT: &str = include_str!("../assets/bundle.js");
const STYLE: &str = include_str!("../assets/bundle.css");
/// The installable page: its manifest, icons and service worker (page/sw.js).
const MANIFEST: &str = include_str!("../page/manifest.webmanifest");
const SERVICE_WORKER: &str = include_str!("../page/sw.js");
const ICON_192: &[u8] = include_bytes!("../page/icon-192.png");
const ICON_512: &[u8] = include_bytes!("../page/icon-512.png");

fn page() -> axum::response::Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response()
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { page() }))
        // A phone's pairing: the same page, which reads the code from the fragment.
        .route("/pair", get(|| async { page() }))
        .route(
            "/manifest.webmanifest",
            get(|| async { ([(header::CONTENT_TYPE, "application/manifest+json")], MANIFEST).into_response() }),
        )
        .route(
            "/sw.js",
            get(|| async {
                // Checked for updates at each load (no-store would too; this says it).
                (
                    [
                        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
                        (header::CACHE_CONTROL, "no-cache"),
                    ],
                    SERVICE_WORKER,
                )
                    .into_response()
            }),
        )
        .route(
            "/icon-192.png",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], ICON_192).into_response() }),
        )
        .route(
            "/icon-512.png",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], ICON_512).into_response() }),
        )
        .route(
            "/app.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT).into_response() }),
        )
        .route(
            "/app.css",
            get(|| async { ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response() }),
        )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The manifest installs: a name, both icons at the sizes they are, a
    /// standalone display and a start URL that carries no token.
    #[test]
    fn the_manifest_installs() {
        let manifest: serde_json::Value = serde_json::from_str(super::MANIFEST).expect("manifest is JSON");
        assert_eq!(manifest["name"], "fugue");
        assert_eq!(manifest["display"], "standalone");
        assert_eq!(manifest["start_url"], "/");
        let icons = manifest["icons"].as_array().unwrap();
        for (icon, bytes, side) in [(&icons[0], super::ICON_192, 192u32), (&icons[1], super::ICON_512, 512)] {
            assert_eq!(icon["sizes"], format!("{side}x{side}"));
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
            let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
            let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
            assert_eq!((width, height), (side, side));
        }
    }

    /// The committed bundle was built from today's lockfile and page: the
    /// digests `scripts/bundle-page` recorded match, and the page's own script
    /// and styles are in it as they are now.
    #[test]
    fn the_committed_bundle_matches_its_sources() {
        let web = Path::new(env!("CARGO_MANIFEST_DIR"));
        let recorded = std::fs::read_to_string(web.join("assets/SOURCES")).expect("web/assets/SOURCES");
        for line in recorded.lines() {
            let (digest, file) = line.split_once("  ").expect("DIGEST  FILE");
            let bytes = std::fs::read(web.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            let now = format!("{:016x}", fugue_protocol::socket::stable_hash(&bytes));
            assert_eq!(
                now, digest,
                "web/{file} changed since web/assets was built: run scripts/bundle-page and commit web/assets"
            );
        }
        assert_eq!(recorded.lines().count(), 3, "{recorded}");
        let script = std::fs::read_to_string(web.join("page/app.js")).unwrap();
        let style = std::fs::read_to_string(web.join("page/app.css")).unwrap();
        assert!(super::SCRIPT.contains(&script), "bundle.js lacks today's page/app.js");
        assert!(super::STYLE.contains(&style), "bundle.css lacks today's page/app.css");
    }
}
