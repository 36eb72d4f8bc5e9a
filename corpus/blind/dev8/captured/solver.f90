program heat
  implicit none
  integer :: i, it
  real :: u(200), tiny_v
  u = 1.0
  tiny_v = 1.0e-30
  print '(a)', ' HEAT2D explicit solver v1.4'
  do it = 1, 50
    do i = 2, 199
      u(i) = u(i) + 0.1*(u(i-1) - 2*u(i) + u(i+1))
    end do
    tiny_v = tiny_v * 1.0e-5
    if (tiny_v < 0) print *, tiny_v
    if (mod(it,10) == 0) print '(a,i4,a,es12.4)', ' iter ', it, '  residual ', sum(abs(u))*1e-6
  end do
  print '(a)', ' converged; writing solution.dat'
  stop
end program heat
