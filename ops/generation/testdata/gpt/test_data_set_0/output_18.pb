
Bbeam_one_sequences_scoresJ^q£¾8ô¾?í…¼