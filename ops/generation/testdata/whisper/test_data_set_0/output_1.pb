
Bwhisper_sequences_scoresJß“¿ùM•¿8ïz¿ð3}¿