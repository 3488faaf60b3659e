"""The corpus modules are imported by the tests, never collected on their own."""

collect_ignore_glob = ["corpus/*"]
