
Bwhisper_sequences_scoresJidÀY€ÀÓõÀÿÀ