"""The three formats: text (`path:line:col: id: message`, then the port),
JSON, and SARIF 2.1.0 for code-scanning UIs."""

from __future__ import annotations

import json
import os
import pathlib
import urllib.parse
from typing import Dict, List, Optional, Sequence

from tfpartial._tools.scan._finding import Finding
from tfpartial._tools.scan.idioms import all_idioms

SARIF_SCHEMA = ("https://json.schemastore.org/sarif-2.1.0.json")


def text(findings: Sequence[Finding]) -> str:
  """One line per finding, then its drift and its port, indented.

  >>> print(text([Finding("a.py", 3, 5, "grads-mask", "m", "d", "p")]), end="")
  a.py:3:5: grads-mask: m
    drift: d
    port: p
  """
  out = []
  for finding in findings:
    where = f"{finding.path}:{finding.line}:{finding.col}"
    cell = f"(cell {finding.cell}) " if finding.cell else ""
    out.append(f"{where}: {finding.idiom}: {cell}{finding.message}\n")
    out.append(f"  drift: {finding.drift}\n")
    port = finding.port
    if finding.by_hand:
      port += f" (by hand: {finding.by_hand})"
    elif finding.edits:
      port += " (mechanical: --diff)"
    out.append(f"  port: {port}\n")
  return "".join(out)


def as_json(findings: Sequence[Finding],
            fingerprints: Optional[Sequence[str]] = None) -> str:
  """A JSON list of objects: path, line, col, idiom, message, drift, port
  (and cell, mechanical, by_hand, and the fingerprint a baseline matches).

  >>> json.loads(as_json([Finding("a.py", 1, 1, "grads-mask", "m", "d",
  ...                             "p")]))[0]["idiom"]
  'grads-mask'
  """
  items: List[Dict[str, object]] = []
  for finding in findings:
    item: Dict[str, object] = {
        "path": finding.path, "line": finding.line, "col": finding.col,
        "idiom": finding.idiom, "message": finding.message,
        "drift": finding.drift, "port": finding.port,
        "mechanical": bool(finding.edits), "by_hand": finding.by_hand}
    if finding.cell is not None:
      item["cell"] = finding.cell
    if fingerprints is not None:
      item["fingerprint"] = fingerprints[len(items)]
    items.append(item)
  return json.dumps(items, indent=2) + "\n"


def sarif(findings: Sequence[Finding], version: str,
          fingerprints: Optional[Sequence[str]] = None) -> str:
  """SARIF 2.1.0: one rule per idiom (help linking the guide's section),
  one result per finding (with its fingerprint, if given, as a partial
  fingerprint).

  >>> log = json.loads(sarif([], "1.0"))
  >>> log["version"], len(log["runs"][0]["tool"]["driver"]["rules"])
  ('2.1.0', 6)
  """
  idioms = all_idioms()
  rules = [idiom.rule() for idiom in idioms]
  levels = {idiom.id: idiom.entry.level for idiom in idioms}
  ids = [idiom.id for idiom in idioms]
  results: List[Dict[str, object]] = []
  for finding in findings:
    results.append({
        "ruleId": finding.idiom,
        "ruleIndex": ids.index(finding.idiom),
        "level": levels[finding.idiom],
        "message": {"text": f"{finding.message}. Drift: {finding.drift}. "
                            f"Port: {finding.port}"},
        "locations": [{"physicalLocation": {
            "artifactLocation": artifact(finding.path),
            "region": {"startLine": finding.line,
                       "startColumn": finding.col}}}],
    })
    if fingerprints is not None:
      results[-1]["partialFingerprints"] = {
          "tfpartialScan/v1": fingerprints[len(results) - 1]}
  log = {
      "$schema": SARIF_SCHEMA, "version": "2.1.0",
      "runs": [{"tool": {"driver": {
          "name": "tfpartial scan", "version": version,
          "rules": rules}},
          "originalUriBaseIds": {"%SRCROOT%": {
              "uri": pathlib.Path.cwd().as_uri().rstrip("/") + "/"}},
          "results": results}],
  }
  return json.dumps(log, indent=2) + "\n"


def artifact(path: str) -> Dict[str, str]:
  """SARIF's `artifactLocation` of a path: a relative URI reference from
  the current folder (`%SRCROOT%`), percent-encoded as RFC 3986 requires,
  or a `file:` URI for an absolute path.

  >>> artifact("my code/#1 100%.py")
  {'uri': 'my%20code/%231%20100%25.py', 'uriBaseId': '%SRCROOT%'}
  """
  if os.path.isabs(path):
    return {"uri": pathlib.Path(path).as_uri()}
  name = os.fsencode(path).replace(os.sep.encode(), b"/")
  return {"uri": urllib.parse.quote(name, safe="/"), "uriBaseId": "%SRCROOT%"}


def by_hand(findings: Sequence[Finding]) -> str:
  """The findings `--diff` leaves to the reader, one line each."""
  return "".join(
      f"port by hand: {f.path}:{f.line}:{f.col}: {f.idiom}: {f.by_hand}\n"
      for f in findings if f.by_hand)
