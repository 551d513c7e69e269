
B	b_full_y1Jÿÿÿÿÿÿÿÿ