"""Helpers of the idioms: gradients masked between computing and applying them,
and the ports that rewrite them."""
