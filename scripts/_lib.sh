# shellcheck shell=bash
# Shared plumbing for scripts/test and scripts/demo: sourced, not run.
# Everything it builds lives under .cache/ (gitignored) and is reused while its inputs are unchanged.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE="$REPO/.cache"
LOGS="$CACHE/logs"
mkdir -p "$LOGS"

# shellcheck disable=SC2034  # used by scripts/test
NATIVE_VERSIONS=(3.10 3.11 3.12 3.13)
RUFF_SPEC="ruff==0.17.6"
MYPY_SPEC="mypy==2.4.1"
PYODIDE_SPEC="pyodide@314.0.7"  # CPython 3.14.2 compiled to WebAssembly
# Pure-Python wheels that pytest needs inside Pyodide (versions as in pyodide 314.0.7's lock file),
# plus the test extras the decompiler tests may import.
PYODIDE_WHEELS=(pytest==9.0.2 pluggy==1.6.0 iniconfig==2.3.0 packaging==26.1 pygments==2.20.0
    pysource-codegen==0.7.1 pysource-minimize==0.10.1 typing-extensions==4.15.0)

now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; }
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { log "error: $*" >&2; exit 1; }

# quietly LOGFILE CMD...: run CMD with its output in LOGFILE; show the log's tail if it fails.
quietly() {
    local logfile=$1; shift
    if ! "$@" >"$logfile" 2>&1; then
        log "failed: $* (last lines of $logfile follow)" >&2
        tail -n 40 "$logfile" >&2
        return 1
    fi
}

# find_python 3.12: the newest pyenv CPython 3.12.x, else python3.12 on PATH.
find_python() {
    local root candidates
    root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
    mapfile -t candidates < <(printf '%s\n' "$root/versions/$1".[0-9]* | sort -V)
    if ((${#candidates[@]})) && [[ -x "${candidates[-1]}/bin/python" ]]; then
        echo "${candidates[-1]}/bin/python"
    elif command -v "python$1" >/dev/null; then
        command -v "python$1"
    else
        die "no CPython $1 found (looked in $root/versions and on PATH)"
    fi
}

# locked CMD...: run CMD while holding the set-up lock, so that parallel jobs install one at a time
# (`pip install -e .` writes src/unveil.egg-info) and never both build the same thing.
locked() {
    (
        flock 9
        "$@"
    ) 9>"$CACHE/.setup.lock"
}

# ensure_venv DIR PYTHON PIP_ARGS...: make DIR a virtualenv of PYTHON holding `pip install PIP_ARGS`.
# Reused as is while pyproject.toml, the interpreter and PIP_ARGS are unchanged (a hash stamp).
ensure_venv() { locked _ensure_venv "$@"; }
_ensure_venv() {
    local dir=$1 python=$2; shift 2
    local stamp t0 name
    name=$(basename "$dir")
    stamp=$( { cat "$REPO/pyproject.toml"; echo "$python $*"; } | sha256sum | cut -c1-16)
    if [[ "$(cat "$dir/.unveil-stamp" 2>/dev/null)" == "$stamp" ]] && "$dir/bin/python" -c '' 2>/dev/null; then
        return 0
    fi
    t0=$(now)
    log "setup: $name: pip install $* ..."
    if ! "$dir/bin/python" -c '' 2>/dev/null; then
        rm -rf "$dir"
        quietly "$LOGS/setup-$name.log" "$python" -m venv "$dir"
    fi
    (cd "$REPO" && quietly "$LOGS/setup-$name.log" "$dir/bin/python" -m pip install \
        --disable-pip-version-check "$@")
    echo "$stamp" >"$dir/.unveil-stamp"
    log "setup: $name ready ($(since "$t0"))"
}

# The per-version test venvs: .cache/venv-3.10 ... .cache/venv-3.13; ruff and mypy live in the 3.11 one.
ensure_native_venv() {
    local v=$1 python tools=()
    python=$(find_python "$v")
    [[ $v == 3.11 ]] && tools=("$RUFF_SPEC" "$MYPY_SPEC")
    ensure_venv "$CACHE/venv-$v" "$python" -e ".[test]" "${tools[@]}"
}

# The PyTorch venvs. The default (Python 3.11, torch 2.13.0, the CPU build on local disk) is
# .cache/venv-3.11-torch, shared by tests/torch_compile and scripts/demo; any other pair is
# .cache/venv-PY-torch-VERSION (numpy: torch warns without it; transformers: the real-model tests,
# pinned so a release cannot move CI). Releases above pip's on-disk cap (/etc/xdg/pip caps torch at
# 2.14.1) are fetched from the package registry with pip's configuration bypassed for that one
# command: a CUDA build (~3.5 GB of CUDA libraries) that runs on the CPU. (Not through the
# torch extra: any release can be measured, also one older than pyproject.toml asks for.)
TORCH_DEFAULT_PYTHON=3.11
TORCH_DEFAULT_VERSION=2.13.0
TORCH_ON_DISK=(2.13.0 2.14.1)  # the releases /opt/wheels and /opt/pypi hold (cp311)
# scripts/test's PyTorch suites (--torch): the default pair, the current release, and the
# current release on another Python
# shellcheck disable=SC2034  # used by scripts/test
TORCH_SUITES="2.13.0,2.15.0,2.15.0@3.13"
TRANSFORMERS_SPEC="transformers==5.23.0"
TORCH_VENV="$CACHE/venv-3.11-torch"
# torch_venv_dir PY TORCH: where the venv of that pair lives.
torch_venv_dir() {
    if [[ $1 == "$TORCH_DEFAULT_PYTHON" && $2 == "$TORCH_DEFAULT_VERSION" ]]; then
        echo "$CACHE/venv-$1-torch"
    else
        echo "$CACHE/venv-$1-torch-$2"
    fi
}
# ensure_torch_venv [PY [TORCH]]: set TORCH_VENV to a ready venv of that pair (default 3.11, 2.13.0).
ensure_torch_venv() {
    local py=${1:-$TORCH_DEFAULT_PYTHON} version=${2:-$TORCH_DEFAULT_VERSION} python extra=()
    python=$(find_python "$py")
    TORCH_VENV=$(torch_venv_dir "$py" "$version")
    # torch 2.14.1's torchvision is on disk too; with it timm's models run on the CPU.
    [[ $version == 2.14.1 ]] && extra=(torchvision==0.29.1 timm)
    if [[ $py == 3.11 && " ${TORCH_ON_DISK[*]} " == *" $version "* ]]; then
        ensure_venv "$TORCH_VENV" "$python" -e ".[test,debug,report,models]" \
            "torch==$version" "${extra[@]}" "$TRANSFORMERS_SPEC" numpy
    else
        PIP_CONFIG_FILE=/dev/null ensure_venv "$TORCH_VENV" "$python" \
            -e ".[test,debug,report,models]" "torch==$version" "${extra[@]}" \
            "$TRANSFORMERS_SPEC" numpy
    fi
}

# Debian's Chromium for the report's browser test (Playwright drives it; no browser
# download). Installed with apt when missing and apt can (root); else the test says so.
ensure_chromium() { locked _ensure_chromium; }
_ensure_chromium() {
    [[ -x /usr/bin/chromium ]] && return 0
    if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
        log "setup: apt-get install chromium (the report's browser test) ..."
        quietly "$LOGS/setup-chromium.log" apt-get install -y -q chromium \
            || quietly "$LOGS/setup-chromium.log" bash -c "apt-get update -q && apt-get install -y -q chromium" \
            || log "setup: could not install chromium (see $LOGS/setup-chromium.log)"
    fi
}

# Pyodide (npm) in .cache/pyodide and the wheels pytest needs there in .cache/wheels-314
# (where scripts/pyodide_pytest.mjs looks for them).
PYODIDE_DIR="$CACHE/pyodide/node_modules/pyodide"
WHEELS_314="$CACHE/wheels-314"
ensure_pyodide() { locked _ensure_pyodide; }
_ensure_pyodide() {
    local t0 python
    command -v node >/dev/null || die "node (20+) is needed for the Python 3.14 (Pyodide) run"
    if [[ "$(cat "$CACHE/pyodide/.unveil-stamp" 2>/dev/null)" != "$PYODIDE_SPEC" || ! -f $PYODIDE_DIR/pyodide.mjs ]]; then
        t0=$(now)
        log "setup: npm install $PYODIDE_SPEC ..."
        mkdir -p "$CACHE/pyodide"
        quietly "$LOGS/setup-pyodide.log" \
            npm install --prefix "$CACHE/pyodide" --no-audit --no-fund "$PYODIDE_SPEC"
        echo "$PYODIDE_SPEC" >"$CACHE/pyodide/.unveil-stamp"
        log "setup: pyodide ready ($(since "$t0"))"
    fi
    if [[ "$(cat "$WHEELS_314/.unveil-stamp" 2>/dev/null)" != "${PYODIDE_WHEELS[*]}" ]]; then
        t0=$(now)
        log "setup: downloading wheels for Pyodide ..."
        rm -rf "$WHEELS_314"
        python=$(find_python 3.11)
        quietly "$LOGS/setup-wheels-314.log" "$python" -m pip download \
            --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.14 \
            -d "$WHEELS_314" "${PYODIDE_WHEELS[@]}"
        echo "${PYODIDE_WHEELS[*]}" >"$WHEELS_314/.unveil-stamp"
        log "setup: wheels ready ($(since "$t0"))"
    fi
}
