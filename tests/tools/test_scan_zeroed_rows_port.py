"""`tfpartial scan`: the port it names for fixed rows of a table set back
to zeros with each step (a padding row zeroed before every lookup, as
nextitnet's `mask_padding_embedding_lookup` and LibRecommender do), when
no mechanical edit applies: the rows never change, so the port freezes
those rows once zeroed; it must not say the mask may change."""

import textwrap

import pytest

import test_scan_guarded_zeros
from tfpartial._tools.scan import _scan

CASES = {
    # nextitnet's helper: row 0 of the table passed in, zeroed before
    # each lookup, the model calls it on its own table.
    "row 0 zeroed before each lookup": ("""\
        class NextItemModel:
          def __init__(self, n_items, dim, seq):
            self.embedding = tf.get_variable("item_embedding", [n_items, dim])
            out = self.mask_padding_embedding_lookup(self.embedding, dim, seq)
            self.loss = tf.reduce_mean(out)
            self.train_op = tf.train.AdamOptimizer(0.01).minimize(self.loss)

          def mask_padding_embedding_lookup(self, embeddings, dim, input):
            zero_op = tf.scatter_update(
                embeddings, 0, tf.zeros([dim], dtype=tf.float32))
            with tf.control_dependencies([zero_op]):
              output = tf.nn.embedding_lookup(embeddings, input)
            return output
        """, "tfpartial.freeze(embeddings, 0)"),
    # LibRecommender's multi_sparse_alone (the guarded-zeros tests' own
    # program): the OOV row given as a list.
    "an OOV row zeroed before the lookup": (
        test_scan_guarded_zeros.POSITIVE[
            "OOV rows of a table passed in, zeroed before the lookup"][0],
        "tfpartial.freeze(embed_var, [oov])"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_fixed_row_zeroed_each_step_is_ported_as_a_frozen_row(name):
  code, spec = CASES[name]
  findings = _scan.scan_text("m.py", textwrap.dedent(code))
  assert [f.idiom for f in findings] == ["weight-remask"], findings
  [finding] = findings
  assert not finding.edits
  assert "may change" not in finding.by_hand, finding.by_hand
  assert spec in finding.by_hand, finding.by_hand
  assert "once" in finding.by_hand and "drop" in finding.by_hand
