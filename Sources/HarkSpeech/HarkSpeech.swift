// Recognition and synthesis; see docs/speech.md.
