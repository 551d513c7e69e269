
Bt5_basic_sequences_scoresJÓo7¿í9¿K¿©)¿