
Bbeam_early_sequences_scoresJäSú¾^u¿›ª¿DC¾F[¾×œ¾