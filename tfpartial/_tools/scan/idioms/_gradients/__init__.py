"""Gradients masked between computing and applying them, and the ports
that rewrite them."""
