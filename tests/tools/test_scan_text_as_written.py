"""The source a finding quotes is the node's own text. A Python 2 file
whose tab indentation the scanner repairs before it parses has other
columns in its repaired lines than in the file's lines; a cut by the
repaired columns quoted a garbled mask (`lection_onehot), var)`, seen on
a real repository)."""

import ast

from tfpartial._tools.scan import _edits

_FILE = ("def mask(grad, var, onehot):\n"
         "      if 'embedding' in var.name:\n"
         "\treturn (tf.multiply(grad, word_selection_onehot), var)\n")


def _mask_node(text):
  return next(n for n in ast.walk(ast.parse(text))
              if isinstance(n, ast.Name) and n.id == "word_selection_onehot")


def test_a_node_parsed_from_repaired_lines_is_quoted_as_written():
  repaired = _FILE.replace("\treturn", "        return")
  quoted = _edits.text(_mask_node(repaired), _FILE.splitlines(True))
  assert quoted == "word_selection_onehot", quoted


def test_a_node_of_the_file_itself_is_quoted_from_its_lines():
  text = _FILE.replace("\treturn", "        return").replace(
      "tf.multiply(grad, ", "tf.multiply(grad,  ")
  node = next(n for n in ast.walk(ast.parse(text))
              if isinstance(n, ast.Call) and n.lineno == 3)
  # The file's own spacing is kept, not the unparsed form.
  assert _edits.text(node, text.splitlines(True)) == (
      "tf.multiply(grad,  word_selection_onehot)")
