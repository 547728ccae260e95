-- Every experiment of the warehouse's runs in the order it ran: status, wall time, points loaded.
SELECT experiment, status, wall_s, point_count
FROM experiments
ORDER BY run_order;
