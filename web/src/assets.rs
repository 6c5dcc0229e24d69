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

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/",
            get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response() }),
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
