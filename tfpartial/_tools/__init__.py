"""The tools the command line runs: `verify` and its checkpoint readers
(`verify/`), `bench` (`bench/`), `demo` (`_demo`).

Imports the public API (`_api`) and the layers below it.
"""
