//! Bundles the page at build time: installs the locked npm packages when
//! `node_modules` does not match `package-lock.json`, then concatenates xterm.js,
//! its fit addon and the page's script into one `bundle.js` (and the styles into
//! one `bundle.css`) in OUT_DIR, which the binary embeds. No CDN, nothing to
//! ship beside the binary.

use std::path::Path;
use std::process::Command;

const SCRIPTS: [&str; 3] = [
    "node_modules/@xterm/xterm/lib/xterm.js",
    "node_modules/@xterm/addon-fit/lib/addon-fit.js",
    "page/app.js",
];
const STYLES: [&str; 2] = ["node_modules/@xterm/xterm/css/xterm.css", "page/app.css"];
/// Written into node_modules after an install: the lockfile it installed.
const STAMP: &str = "node_modules/.fugue-installed-lock.json";

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    for watched in ["package.json", "package-lock.json", "page"] {
        println!("cargo:rerun-if-changed={}", dir.join(watched).display());
    }
    install(dir);
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    concat(dir, &SCRIPTS, &out.join("bundle.js"), ";\n");
    concat(dir, &STYLES, &out.join("bundle.css"), "\n");
}

fn install(dir: &Path) {
    let lock = std::fs::read(dir.join("package-lock.json")).expect("web/package-lock.json");
    if std::fs::read(dir.join(STAMP)).ok().as_ref() == Some(&lock) {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
        .current_dir(dir)
        .status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => panic!("`npm ci` in {} failed ({status})", dir.display()),
        Err(err) => {
            panic!("cannot run npm to fetch the page's packages ({err}); install Node.js and npm (see the README)")
        }
    }
    std::fs::write(dir.join(STAMP), lock).expect("write the install stamp");
}

fn concat(dir: &Path, parts: &[&str], to: &Path, separator: &str) {
    let mut bundle = String::new();
    for part in parts {
        let text = std::fs::read_to_string(dir.join(part)).unwrap_or_else(|e| panic!("read {part}: {e}"));
        bundle.push_str(&format!("/* {part} */\n"));
        bundle.push_str(&text);
        bundle.push_str(separator);
    }
    std::fs::write(to, bundle).expect("write the bundle");
}
