"""`tfpartial scan`: find hand-made partial freezing, say why it drifts,
print the port.

Static only: the scanner reads source text with `ast` and never imports or
runs what it scans, and imports nothing of TensorFlow or of the rest of
tfpartial. `_files` reads `.py` files and notebook code cells, bounded
(`_notebook` turns a cell into the Python IPython runs, `_lines` tells
where a line stands without tokenizing it); `_project`
indexes every module of the scanned paths and resolves names across them;
`_scopes` records what each name is assigned and where, and `_reaching`
which of those assignments each read sees (through branches and loops);
`_flow` follows
the data through names, attributes and calls into the project (each call
evaluated with its arguments: the callee's summary); each idiom is one
module of `idioms/` (its detection, explanation, catalogue entry, SARIF
rule and port); `_scan.scan_project` runs them over the project; `_diff`
writes the ports in the files' own bytes (`_cells` a notebook's, in
its JSON); `_report` writes text, JSON and
SARIF; `_gate` leaves out findings suppressed inline (`_suppress`) or
known from a baseline (`_baseline`).
"""
