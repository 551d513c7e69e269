
Bshared_beams_sequences_scoresJäSú¾_\¿ÿ×÷¾·ßú¾