// Run pytest under CPython 3.14 in Pyodide (WebAssembly, in Node): node scripts/pyodide_pytest.mjs [pytest args]
// Exits with pytest's exit code. Set up by scripts/test (see ensure_pyodide in scripts/_lib.sh):
//   UNVEIL_PYODIDE_DIR  the pyodide npm package   (default .cache/pyodide/node_modules/pyodide)
//   UNVEIL_WHEELS_314   pure-Python wheels for it (default .cache/wheels-314)
// The repository is mounted at /repo (absolute host paths into it are rewritten to match); other
// absolute host paths among the arguments are mounted at the same path. Inside Pyodide there are no threads and no subprocesses.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { mountArgs } from "./_pyodide_mounts.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pyodideDir = path.resolve(
  process.env.UNVEIL_PYODIDE_DIR ?? path.join(repo, ".cache/pyodide/node_modules/pyodide"),
);
const wheelsDir = path.resolve(process.env.UNVEIL_WHEELS_314 ?? path.join(repo, ".cache/wheels-314"));
const args = process.argv.slice(2);

// Only these host variables reach Python: Pyodide must not see the host's PYTHONPATH or PYTHONHOME.
const env = { HOME: "/home/pyodide", PYTHONDONTWRITEBYTECODE: "1" };
for (const [k, v] of Object.entries(process.env)) {
  if (/^(CI|COLUMNS|NO_COLOR|FORCE_COLOR|PYTEST_.*|UNVEIL_.*)$/.test(k)) env[k] = v;
}

const t0 = performance.now();
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const py = await loadPyodide({ indexURL: pyodideDir + path.sep, env });
const write = (fd) => ({ write: (buf) => fs.writeSync(fd, buf), isatty: false });
py.setStdout(write(1));
py.setStderr(write(2));
console.error(`pyodide: runtime loaded in ${((performance.now() - t0) / 1000).toFixed(1)}s`);

py.FS.mkdirTree("/wheels");
py.mountNodeFS("/wheels", wheelsDir);
const pytestArgs = mountArgs(py, repo, args);

py.globals.set("pytest_args", py.toPy(["-p", "no:cacheprovider", ...pytestArgs]));
let code;
try {
  code = py.runPython(`
import glob, os, sys
sys.dont_write_bytecode = True  # keep .pyc files (pytest's rewritten ones too) out of the host tree
sys.path[:0] = [*sorted(glob.glob("/wheels/*.whl")), "/repo/src"]
os.chdir("/repo")
import pytest
int(pytest.main(list(pytest_args)))
`);
} catch (err) {
  console.error(err);
  code = 3; // pytest's "internal error"
}
process.exit(Number(code));
