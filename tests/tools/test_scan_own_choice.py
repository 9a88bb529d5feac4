"""`tfpartial scan` on code that chooses its own trainable subset through
a helper of the project whose call names what trains:
`get_trainable_variables(["encode_context", "pixel_cnn"])`, a generic
name filter of a utilities module handed the names as literals (a
conditional PixelVAE's trainer). The finding is at the call, where the
names are chosen; a helper that reads the names itself (slim's flags)
keeps it inside. Sources are paraphrases of part thirty's trees."""

import pytest
import scanned

_UTILS = """\
    import tensorflow as tf

    def get_trainable_variables(flist, filter_type="in"):
        all_vs = tf.trainable_variables()
        if filter_type == "in":
            vs = []
            for s in flist:
                vs += [p for p in all_vs if s in p.name]
        elif filter_type == "not in":
            vs = all_vs
            for s in flist:
                vs = [p for p in vs if s not in p.name]
        return vs
    """

_TRAIN = """\
    import tensorflow as tf
    from utils.utils import get_trainable_variables

    model = tf.make_template('model', build_graph)
    model(x)
    if args.use_mode == 'train':
        all_params = get_trainable_variables(["encode_context", "pixel_cnn"])
        if args.freeze_encoder:
            all_params = [p for p in all_params if "conv_encoder_" not in p.name]
        grads = tf.gradients(loss, all_params)
        train_step = adam_updates(all_params, grads, lr=args.learning_rate)
    """

FOUND = {
    # The PixelVAE trainer: the helper in utils/, the names at the call.
    "names handed to a helper of another module": (
        {"utils/__init__.py": "", "utils/utils.py": _UTILS,
         "train.py": _TRAIN},
        [("var-list-filter", "train.py", 7)]),
    # The same helper in the trainer's own file.
    "names handed to a helper of the same module": (
        {"t.py": _UTILS + "\n\n" + _TRAIN.replace(
            "from utils.utils import get_trainable_variables\n", "")},
        [("var-list-filter", "t.py", 21)]),
    # One name handed as a string, not a list.
    "one name handed as a string": (
        {"utils/__init__.py": "", "utils/utils.py": _UTILS,
         "train.py": _TRAIN.replace(
             '["encode_context", "pixel_cnn"]', '"pixel_cnn"')},
        [("var-list-filter", "train.py", 7)]),
}

SILENT = {
    # A GAN's two halves, each chosen by the same helper, each trained
    # on its own loss: between them the whole model trains.
    "a GAN's halves chosen by the helper": {
        "utils/__init__.py": "", "utils/utils.py": _UTILS,
        "train.py": """\
            import tensorflow as tf
            from utils.utils import get_trainable_variables

            g_vars = get_trainable_variables(["generator"])
            d_vars = get_trainable_variables(["discriminator"])
            g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
            d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
            """},
    # A second model trained alone: the only model of the graph, named
    # by the scope it is built under.
    "a second model trained alone": {
        "utils/__init__.py": "", "utils/utils.py": _UTILS,
        "train.py": """\
            import tensorflow as tf
            from utils.utils import get_trainable_variables

            with tf.variable_scope("classifier"):
                logits = classifier(x)
            loss = tf.losses.softmax_cross_entropy(y, logits)
            params = get_trainable_variables("classifier")
            op = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=params)
            """},
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_names_handed_to_a_helper_are_found_at_the_call(name):
  files, expected = FOUND[name]
  assert scanned.in_project(files) == expected


@pytest.mark.parametrize("name", sorted(SILENT))
def test_look_alikes_stay_silent(name):
  assert scanned.in_project(SILENT[name]) == []
