
B
q_const_y0J0%Rมสิ=มY๎ภX9@้UมEgม ๚@บ์๚@0GAืA:หE?E}@