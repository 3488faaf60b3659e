// Run a Python script under CPython 3.14 in Pyodide (WebAssembly, in Node):
//   node scripts/pyodide_python.mjs SCRIPT [ARGS...]
// The repository is mounted at /repo with /repo/src first on sys.path; absolute host paths among
// SCRIPT and ARGS are mounted at the same path (a directory, or a file's directory), so
// `--json /tmp/out.json` or `--stdlib /tmp/std314` work as given. Exits with the script's status.
// The stdlib round trip on 3.14 (its standard library, extracted once from Pyodide's zip):
//   mkdir -p /tmp/std314 && unzip -qo .cache/pyodide/node_modules/pyodide/python_stdlib.zip -d /tmp/std314
//   node scripts/pyodide_python.mjs benchmarks/stdlib_roundtrip.py --jobs 1 --stdlib /tmp/std314
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { mountArgs } from "./_pyodide_mounts.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pyodideDir = path.resolve(
  process.env.UNVEIL_PYODIDE_DIR ?? path.join(repo, ".cache/pyodide/node_modules/pyodide"),
);
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
// (PYTHONHASHSEED passes through: scripts/same_output.py needs a fixed one)
const env = { HOME: "/home/pyodide" };
if (process.env.PYTHONHASHSEED) env.PYTHONHASHSEED = process.env.PYTHONHASHSEED;
const py = await loadPyodide({ indexURL: pyodideDir + path.sep, env });
const write = (fd) => ({ write: (buf) => fs.writeSync(fd, buf), isatty: false });
py.setStdout(write(1));
py.setStderr(write(2));
// (the script too: a host path is mounted like any other argument)
const args = mountArgs(py, repo, process.argv.slice(2).map((a) => (fs.existsSync(a) ? path.resolve(a) : a)));
py.globals.set("script_args", py.toPy(args));
let code = 0;
try {
  code = py.runPython(`
import os, runpy, sys
sys.dont_write_bytecode = True
sys.path[:0] = ["/repo/src"]
os.chdir("/repo")
sys.argv = list(script_args)
sys.path.insert(1, os.path.dirname(os.path.abspath(sys.argv[0])))
status = 0
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
status
`);
} catch (err) {
  console.error(err);
  code = 1;
}
process.exit(Number(code));
