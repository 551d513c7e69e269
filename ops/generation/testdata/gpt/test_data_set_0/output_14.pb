
Bbeam_batch4_sequences_scoresJ@­,ˆ¾¯\Ã¿ò,ì¿	ø¿íd’¿²â¬¿üÚ¿óÉÜ¿>^¿éÖi¿|[¥¿âS«¿R’Ÿ¿Áš£¿Â|¬¿²Ö¿