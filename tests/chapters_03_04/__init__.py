"""Tests of the code behind chapters 03 (self-attention) and 04 (multi-head attention)."""
