
Bbeam_penalties_sequences_scoresJ$‘Úq¿"0r¿æ™¡¿ÑÙ]¿uŒ¹¿Äø¾¿4iÇ¿9NÀ²À