"""What runs when: stages, graphs, branches, options at their default,
hooks, ops built and never run."""
