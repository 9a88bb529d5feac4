"""Doctest namespace: the docstring examples use `tf`, `np` and `tfpartial`."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # pylint: disable=g-import-not-at-top
import pytest  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import tfpartial  # pylint: disable=g-import-not-at-top


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
  doctest_namespace.update(np=np, tf=tf, tfpartial=tfpartial)
