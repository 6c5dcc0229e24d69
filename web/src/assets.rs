//! The page and its bundle, embedded at build time (see build.rs).

use crate::AppState;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("../page/index.html");
const SCRIPT: &str = include_str!(concat!(env!("OUT_DIR"), "/bundle.js"));
const STYLE: &str = include_str!(concat!(env!("OUT_DIR"), "/bundle.css"));

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
