
Bbeam_masks_sequences_scoresJÓñÁ½R£¹½