"""`tfpartial scan`: find hand-made partial freezing, say why it drifts,
print the port.

Static only: the scanner reads source text with `ast` and never imports or
runs what it scans, and imports nothing of TensorFlow or of the rest of
tfpartial. `_files` reads `.py` files and notebook code cells, bounded
(`_notebook` turns a cell into the Python IPython runs, `_lines` tells
where a line stands without tokenizing it);
`_flow` follows the data within a function (and into module-level
helpers); `_detect` anchors each idiom on what it does to a variable's
update; `_context` finds the optimizer, restores and fetches in scope;
`_drift` is the catalogue that turns those into the consequence and the
migration guide's section; `_port` edits line ranges of the original text
for `--diff`; `_report` writes text, JSON and SARIF; `_gate` leaves out findings
suppressed inline (`_suppress`) or known from a baseline (`_baseline`);
`_scan` runs it all.
"""
