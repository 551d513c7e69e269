
B	b_pred_y1Jÿÿÿÿÿÿÿÿ