"""Agent memory (seed 001): daily notes, `remember`, `digest`, entity cards with aliases and
relations, the fixed L1–L4 lookup path, decay, access rules, and budgeted context views.

Pipeline position: the pure parsers (`markdown`, `cards`, `entries`, `mentions`) turn note
text into rows; `derive` writes those rows inside the sync transaction; everything else
reads the index (and, for L3 and writes, the files) and returns the plain data objects of
`memory.model`. Nothing here prints or exits.
"""
