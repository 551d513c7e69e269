B
top_p_seedJÿÿÿ