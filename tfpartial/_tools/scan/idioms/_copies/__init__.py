"""Writes into weights and copies of them: what a write puts back, from
where, and which writes undo or mirror a step."""
