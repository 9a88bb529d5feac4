"""`tfpartial scan`'s `write-back` on writes of values read after the last
step: a stochastic weight average of the model's own weights, read after
each epoch's steps, set once training is over; and a loop that builds a
larger model from the one the last pass trained, its new head's old
columns set from that model before its own first step (class-incremental
training). Beside them, the saved values written back after the step that
stay reported."""

import pytest

import scanned


def _writes(code):
  return [f[1] for f in scanned.in_text(code, "write-back")]


NEGATIVE = {
    # SWA: the average of the model's own weights read after each epoch's
    # steps, set once the loop is over (then saved).
    "a weight average of its own epochs set once training is over": """\
        def main(cfg, network, batches):
          swa_weights = []
          for epoch in range(1, cfg['epochs'] + 1):
            for _ in range(cfg['steps']):
              x, y = next(batches)
              network.train_on_batch(x=x, y=y)
            swa_epoch = cfg['epochs'] + 1 - cfg['swa_epochs']
            if epoch == swa_epoch:
              swa_weights = network.get_weights()
            elif epoch > swa_epoch:
              for i in range(len(swa_weights)):
                swa_weights[i] = (swa_weights[i] * (epoch - swa_epoch)
                                  + network.get_weights()[i]) / (
                                      epoch - swa_epoch + 1)
          network.set_weights(swa_weights)
          network.save('swa.h5')
        """,
    # Class-incremental: each pass builds a larger model from the last one,
    # sets its new head's old columns from the trained head, then trains it
    # all; the trained model is carried on to the next pass.
    "a larger model built from the last one, its head set before it trains":
        """\
        model = build_model()
        model.add(Dense(5000, activation='softmax'))
        model.compile(loss='categorical_crossentropy', optimizer=SGD(0.1))
        model.fit(x, y)
        total = 5000
        for i in range(10):
          model2 = build_model_train(previous_model=model)
          model2.add(Dense(total + 1000, activation='softmax'))
          weights = model2.layers[-1].get_weights()
          old_weights = model.layers[-1].get_weights()
          weights[0][:, -total:] = old_weights[0]
          weights[1][-total:] = old_weights[1]
          model2.layers[-1].set_weights(weights)
          total += 1000
          model2.compile(loss='categorical_crossentropy', optimizer=SGD(0.1))
          model2.fit(x, y)
          model2.save_weights('w%d.h5' % total)
          model = model2
        """,
}


POSITIVE = {
    # Pretrained columns saved before training and put back after each
    # epoch: the frozen columns of a hand-made freeze.
    "saved columns put back after each epoch": ("""\
        saved = model.layers[-1].get_weights()
        for epoch in range(10):
          model.fit(x, y, epochs=1)
          weights = model.layers[-1].get_weights()
          weights[0][:, :100] = saved[0][:, :100]
          model.layers[-1].set_weights(weights)
        """, 6),
    # Read out after the epoch's steps like an average, but with rows of a
    # copy saved before training put into each entry: those rows stay.
    "rows of a copy saved before training put back after each epoch": ("""\
        def main(network, batches):
          initial = network.get_weights()
          for epoch in range(10):
            for x, y in batches:
              network.train_on_batch(x=x, y=y)
            final = network.get_weights()
            for i in range(len(final)):
              final[i][:10] = initial[i][:10]
            network.set_weights(final)
        """, 9),
    # A model grown from the last one each pass, but its head's columns set
    # from a copy saved before the loop: the saved columns come back.
    "a grown model's columns set from a copy saved before the loop": ("""\
        saved = model.layers[-1].get_weights()
        for i in range(10):
          model2 = build_model_train(previous_model=model)
          weights = model2.layers[-1].get_weights()
          weights[0][:, :100] = saved[0][:, :100]
          model2.layers[-1].set_weights(weights)
          model2.fit(x, y)
          model = model2
        """, 6),
    # The same model trained on each pass (never rebuilt): the head's old
    # columns set from a copy kept before the loop, before each pass's step.
    "the same model's columns set from a kept copy before each step": ("""\
        base = model.layers[-1].get_weights()
        for i in range(10):
          weights = model.layers[-1].get_weights()
          weights[0][:, -100:] = base[0][:, -100:]
          model.layers[-1].set_weights(weights)
          model.fit(x, y)
        """, 5),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_values_read_after_the_last_step_are_not_written_back(name):
  assert _writes(NEGATIVE[name]) == []


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_saved_values_written_back_are_found(name):
  code, line = POSITIVE[name]
  assert _writes(code) == [line]
