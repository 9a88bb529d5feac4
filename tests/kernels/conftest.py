"""Fixtures of the kernel's tests: a copy of the kernel, fake compilers."""

import shutil

import pytest

import fakes


@pytest.fixture(scope="session")
def kernel(compiled_kernel, tmp_path_factory):
  """A copy of the kernel this process loaded."""
  copy = tmp_path_factory.mktemp("kernel") / "kernel_copy.so"
  shutil.copyfile(compiled_kernel, copy)
  return copy


@pytest.fixture
def copier(tmp_path, kernel):
  """A `$CXX` that "builds" by copying the real kernel (or the library
  `fakes.copying` names)."""
  source = tmp_path / "copier.source"
  source.write_text(str(kernel))
  return fakes.fake_compiler(tmp_path, "copier",
                             f'cp "$(cat {source})" "$out"')


@pytest.fixture
def failing(tmp_path):
  """A `$CXX` that fails as a compiler without TensorFlow's headers."""
  return fakes.fake_compiler(tmp_path, "failing",
                             "echo 'fatal error: no headers' >&2\nexit 1")
