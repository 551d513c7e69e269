
Bt5_processors_sequences_scoresJ ñ‹‚¾¨â‚¾şÊ‘¾é´’¾İg¾ Ék¾ s„¾Ò…¾