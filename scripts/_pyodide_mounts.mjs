// Shared by the Pyodide runners: mount the repository at /repo and the host paths among
// command-line arguments, so that they mean the same inside Pyodide.
import fs from "node:fs";
import path from "node:path";

// The repository at /repo; each absolute host path among `args` (before any "::", pytest's
// node ids) in the repository rewritten under /repo, any other mounted at the same path (a
// directory, or a file's directory, or, for an output file not written yet, its directory).
export function mountArgs(py, repo, args) {
  py.FS.mkdirTree("/repo");
  py.mountNodeFS("/repo", repo);
  const mounted = new Set();
  const mount = (dir) => {
    if (mounted.has(dir)) return;
    py.FS.mkdirTree(dir);
    py.mountNodeFS(dir, dir);
    mounted.add(dir);
  };
  return args.map((arg) => {
    const host = arg.split("::")[0];
    if (!path.isAbsolute(host)) return arg;
    if (host === repo || host.startsWith(repo + path.sep)) return "/repo" + arg.slice(repo.length);
    if (fs.existsSync(host)) mount(fs.statSync(host).isDirectory() ? host : path.dirname(host));
    else if (fs.existsSync(path.dirname(host))) mount(path.dirname(host));
    return arg;
  });
}
