"""The tools the command line runs: `verify` and its checkpoint readers
(`verify/`), `bench` (`bench/`), `demo` (`_demo`), `scan` (`scan/`, static:
it imports nothing of TensorFlow or of the layers below).

Imports the public API (`_api`) and the layers below it.
"""
