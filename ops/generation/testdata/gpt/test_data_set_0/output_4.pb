
Bbeam_basic_sequences_scoresJäSú¾^u¿DC¾F[¾