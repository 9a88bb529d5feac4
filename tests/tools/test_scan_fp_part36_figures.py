"""`tfpartial scan` on part 36's figure scripts (katejarne/Excitatory-
inhibitory, RNN_study_with_keras, RRN_dynamics): a script loads each
saved model, prunes its small recurrent weights, writes them back with
`set_weights` and plots; the only `fit` in it is `norm.fit(...)`, a
SciPy distribution fitted to a histogram of the weights, no step of any
model. A write that no train step follows is evaluation, no write-back.
The twins stay findings: the same write in a loop that trains the
model after it (`train_on_batch`), whether the script builds the model
or imports it from a module of its own project."""

import pytest

import scanned

_FIGURES = """\
    import os
    import numpy as np
    from keras.models import load_model
    {imports}

    {model}
    for root, sub, files in os.walk(weights_dir):
      for i, f in enumerate(files):
        {load}
        pesos = model.layers[0].get_weights()
        pesos_in = pesos[0]
        pesos = model.layers[0].get_weights()[1]
        model.layers[0].set_weights([pesos_in, pesos])
        histo = list(pesos.flatten())
        {step}
        print(histo)
    """


def _figures(step, imports="from scipy.stats import norm",
             model="model = None", load="model = load_model(f)"):
  return _FIGURES.format(step=step, imports=imports, model=model, load=load)


CASES = {
    # katejarne: SciPy's `norm.fit` of a weight histogram, no training.
    "a scipy distribution fitted after a write into each loaded model": (
        _figures("(mu, sigma) = norm.fit(histo)"), []),
    "a scipy module's distribution fitted after the write": (
        _figures("mu, sigma = st.norm.fit(histo)",
                 imports="import scipy.stats as st"), []),
    "a scipy distribution fitted after a write into one built model": (
        _figures("norm.fit(histo)", model="model = build()", load="pass"),
        []),
    # The twins: the loop trains the model it writes into.
    "the built model trained on a batch after the write": (
        _figures("model.train_on_batch(x, y)", model="model = build()",
                 load="pass"), [("write-back", 13)]),
    "a model of the project trained on a batch after the write": (
        _figures("net.train_on_batch(x, y)", imports="from nets import net",
                 model="model = net", load="pass"), [("write-back", 13)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_weight_write_in_a_figure_script(name):
  code, expected = CASES[name]
  found = scanned.in_project({
      "t.py": code, "nets.py": "from keras.models import Sequential\n"
      "net = Sequential()\n"})
  assert [(i, line) for i, _, line in found if i == "write-back"] == expected
