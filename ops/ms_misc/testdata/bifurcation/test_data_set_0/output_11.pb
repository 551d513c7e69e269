
B	b_none_y1Jÿÿÿÿÿÿÿÿ