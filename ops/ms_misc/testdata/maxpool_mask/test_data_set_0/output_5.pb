
Bp2d_valid_y0Jjï?õª?TK€?ß°@